// Writes the variable tables of docs/configuration.md from the configuration schema
// (src/app/config-schema.ts), between the page's markers.
import fs from 'node:fs';
import path from 'node:path';
import { CONFIG_GROUPS } from '../src/app/config-schema.js';
import { configReference, withConfigReference } from './config-docs/config-reference.js';

const file = path.resolve(import.meta.dirname, '..', 'docs', 'configuration.md');
const before = fs.readFileSync(file, 'utf8');
const after = withConfigReference(before, configReference(CONFIG_GROUPS));
if (after !== before) fs.writeFileSync(file, after);
console.log(`docs/configuration.md: ${after === before ? 'unchanged' : 'written'}`);
