import type { AppDeps } from './app-deps.js';
import { SecretBox } from '../platform/secret-box.js';

declare module './app-deps.js' {
  interface ServiceRegistry {
    secretBox?: SecretBox;
  }
}

/** The process's SecretBox (tracker API keys, webhook secrets), made on first use from the configured key. */
export function secretBox(deps: AppDeps): SecretBox {
  return (deps.services.secretBox ??= SecretBox.fromConfig(deps.config));
}
