/**
 * Makes sure the analytics-query module is mounted in the service these tests start (src/app/modules.ts
 * lists it; this is a no-op then, and keeps the tests meaningful if the list changes). Importing
 * src/app/modules.js before the test helper also settles the module graph in an order that works.
 */
import { modules } from '../../../src/app/modules.js';
import { analyticsQueryModule } from '../../../src/analytics/query/router.js';

if (!modules.some((m) => m.name === analyticsQueryModule.name)) modules.push(analyticsQueryModule);
