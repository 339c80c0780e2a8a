import type { MatchLogic, ModelInfo, Provider } from '@pydantic/genai-prices';
import type { PriceCatalog } from './price-catalog.js';

/**
 * Finds the catalog entry for a model name as instrumented SDKs report it (docs/cost.md "Name
 * matching"). The catalog's own match rules (equals / starts_with / contains / regex, case-blind)
 * decide; this module only chooses which provider to ask and which spellings of the name to try:
 *
 *   1. the name as reported, lower-cased and trimmed;
 *   2. without a router or SDK prefix: `openai/gpt-4o`, `models/gemini-1.5-pro`, `bedrock/...`;
 *   3. a Bedrock id reduced to the vendor's model: `us.anthropic.claude-3-5-sonnet-20240620-v1:0`
 *      → `claude-3-5-sonnet-20240620`;
 *   4. without a trailing snapshot date (`-2024-08-06`, `-20240806`, `@20240806`), used only when
 *      the dated name itself is not in the catalog (a dated name that is listed keeps its price).
 *
 * Providers are asked in this order: the reported provider (gen_ai.provider.name / gen_ai.system,
 * e.g. `aws.bedrock`, `azure.ai.openai`, `gcp.vertex_ai`), the provider a name prefix names, AWS for
 * Bedrock-shaped ids, then the provider whose model rule claims the name (gpt-… → openai, claude →
 * anthropic, gemini → google, …). A name nothing matches is unpriced: never priced at $0.
 */
export interface ResolvedModel {
  provider: Provider;
  model: ModelInfo;
  /** The spelling that matched the model's rule (the pricing call needs a name the rule accepts). */
  matchedName: string;
  /** `provider/model` ids of the catalog entry. */
  key: string;
}

/** OpenTelemetry `gen_ai.provider.name` / `gen_ai.system` values and SDK spellings → catalog provider id. */
const PROVIDER_ALIASES: Readonly<Record<string, string>> = {
  'aws.bedrock': 'aws',
  bedrock: 'aws',
  'amazon-bedrock': 'aws',
  amazon: 'aws',
  'azure.ai.openai': 'azure',
  'azure.ai.inference': 'azure',
  'az.ai.openai': 'azure',
  'az.ai.inference': 'azure',
  azure_openai: 'azure',
  'gcp.gemini': 'google',
  'gcp.vertex_ai': 'google',
  'gcp.gen_ai': 'google',
  vertex_ai: 'google',
  vertexai: 'google',
  vertex: 'google',
  gemini: 'google',
  google_genai: 'google',
  mistral_ai: 'mistral',
  mistralai: 'mistral',
  x_ai: 'x-ai',
  xai: 'x-ai',
  together_ai: 'together',
  togetherai: 'together',
  fireworks_ai: 'fireworks',
  moonshot: 'moonshotai',
  zhipu: 'zhipuai',
};

/** Prefixes that name no provider (Google's `models/…` resource names, router namespaces). */
const NEUTRAL_PREFIXES = new Set(['models', 'model', 'publishers', 'litellm']);

const BEDROCK_ID = /^(?:(?:us|eu|apac|au|jp|ca|sa|us-gov|global)\.)?(anthropic|amazon|meta|mistral|cohere|ai21|deepseek|qwen|openai|writer|moonshot|minimax)\.(.+)$/;
const BEDROCK_VENDOR: Readonly<Record<string, string>> = {
  anthropic: 'anthropic', amazon: 'aws', meta: 'aws', mistral: 'mistral', cohere: 'cohere', ai21: 'aws',
  deepseek: 'deepseek', qwen: 'aws', openai: 'openai', writer: 'aws', moonshot: 'moonshotai', minimax: 'minimax',
};
const TRAILING_DATE = /(?:[-@](?:20\d{2})-?(?:0[1-9]|1[0-2])-?(?:0[1-9]|[12]\d|3[01]))$/;
const BEDROCK_VERSION = /(?:-v\d+(?::\d+)?|:\d+)$/;

function matches(rule: MatchLogic, name: string): boolean {
  if ('or' in rule) return rule.or.some((r) => matches(r, name));
  if ('and' in rule) return rule.and.every((r) => matches(r, name));
  if ('equals' in rule) return name === rule.equals.toLowerCase();
  if ('starts_with' in rule) return name.startsWith(rule.starts_with.toLowerCase());
  if ('ends_with' in rule) return name.endsWith(rule.ends_with.toLowerCase());
  if ('contains' in rule) return name.includes(rule.contains.toLowerCase());
  if ('regex' in rule) {
    try {
      return new RegExp(rule.regex).test(name);
    } catch {
      return false;
    }
  }
  return false;
}

/** The package writes compact dates (`-20240620`) as `-2024-06-20` when the compact form fails; so do we. */
function hyphenateDates(name: string): string {
  return name.replace(/-(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|@|$)/g, '-$1-$2-$3');
}

function findModelIn(catalog: PriceCatalog, provider: Provider, name: string, depth = 0): { model: ModelInfo; name: string; provider: Provider } | null {
  for (const spelling of new Set([name, hyphenateDates(name)])) {
    const model = provider.models.find((m) => matches(m.match, spelling));
    if (model) return { model, name: spelling, provider };
  }
  // Azure and others resell other providers' models at their prices (`fallback_model_providers`).
  if (depth === 0) {
    for (const id of provider.fallback_model_providers ?? []) {
      const fallback = catalog.providers.find((p) => p.id === id);
      const found = fallback ? findModelIn(catalog, fallback, name, 1) : null;
      if (found) return found;
    }
  }
  return null;
}

/** A provider hint (attribute value or name prefix) → catalog provider, or null when it names none. */
export function resolveProvider(catalog: PriceCatalog, hint: string | null | undefined): Provider | null {
  const raw = (hint ?? '').trim().toLowerCase();
  if (!raw || NEUTRAL_PREFIXES.has(raw)) return null;
  const byId = (id: string) => catalog.providers.find((p) => p.id === id) ?? null;
  const direct = byId(PROVIDER_ALIASES[raw] ?? raw);
  if (direct) return direct;
  // `openai.chat`, `groq.chat`, `anthropic.messages` (Vercel AI SDK), `aws.bedrock`, …
  const head = raw.split(/[./:]/)[0];
  const byHead = byId(PROVIDER_ALIASES[head] ?? head);
  if (byHead) return byHead;
  return catalog.providers.find((p) => p.provider_match && matches(p.provider_match, raw)) ?? null;
}

interface Attempt {
  provider: Provider | null;
  name: string;
}

function spellings(name: string): { names: string[]; prefixHints: string[]; bedrockVendor: string | null } {
  const names = [name];
  const prefixHints: string[] = [];
  let bedrockVendor: string | null = null;
  const segments = name.split('/').filter(Boolean);
  if (segments.length > 1) {
    prefixHints.push(...segments.slice(0, -1).filter((s) => !NEUTRAL_PREFIXES.has(s)));
    names.push(segments[segments.length - 1]);
  }
  for (const candidate of [...names]) {
    const bedrock = BEDROCK_ID.exec(candidate);
    if (bedrock) {
      bedrockVendor = bedrock[1];
      names.push(bedrock[2].replace(BEDROCK_VERSION, ''));
    }
  }
  for (const candidate of [...names]) {
    const undated = candidate.replace(TRAILING_DATE, '');
    if (undated !== candidate && undated.length > 0) names.push(undated);
  }
  return { names: [...new Set(names)], prefixHints, bedrockVendor };
}

function attempts(catalog: PriceCatalog, name: string, providerHint: string | null | undefined): Attempt[] {
  const { names, prefixHints, bedrockVendor } = spellings(name);
  const hinted: Provider[] = [];
  const add = (p: Provider | null) => {
    if (p && !hinted.includes(p)) hinted.push(p);
  };
  add(resolveProvider(catalog, providerHint));
  for (const prefix of prefixHints) add(resolveProvider(catalog, prefix));
  if (bedrockVendor) {
    add(resolveProvider(catalog, 'aws'));
    add(resolveProvider(catalog, BEDROCK_VENDOR[bedrockVendor] ?? bedrockVendor));
  }
  const list: Attempt[] = [];
  // Hinted providers first, every spelling; then providers whose model rule claims a spelling.
  for (const provider of hinted) for (const n of names) list.push({ provider, name: n });
  for (const n of names) list.push({ provider: null, name: n });
  return list;
}

const cache = new WeakMap<PriceCatalog, Map<string, ResolvedModel | null>>();

/** The catalog entry pricing `model` (as reported, with an optional provider hint), or null: unpriced. */
export function resolveModel(catalog: PriceCatalog, model: string, providerHint?: string | null): ResolvedModel | null {
  const name = model.trim().toLowerCase();
  if (!name) return null;
  let memo = cache.get(catalog);
  if (!memo) cache.set(catalog, (memo = new Map<string, ResolvedModel | null>()));
  const memoKey = `${(providerHint ?? '').trim().toLowerCase()}\u0001${name}`;
  if (memo.has(memoKey)) return memo.get(memoKey) ?? null;

  let resolved: ResolvedModel | null = null;
  for (const attempt of attempts(catalog, name, providerHint)) {
    const providers = attempt.provider
      ? [attempt.provider]
      : catalog.providers.filter((p) => p.model_match && matches(p.model_match, attempt.name));
    for (const provider of providers) {
      const found = findModelIn(catalog, provider, attempt.name);
      if (found) {
        resolved = { provider: found.provider, model: found.model, matchedName: found.name, key: `${found.provider.id}/${found.model.id}` };
        break;
      }
    }
    if (resolved) break;
  }
  memo.set(memoKey, resolved);
  return resolved;
}
