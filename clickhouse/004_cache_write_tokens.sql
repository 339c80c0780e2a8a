-- Prompt tokens written to a provider cache, per generation (gen_ai.usage.cache_creation.input_tokens
-- and its OpenInference / Vercel AI SDK equivalents; 0 when the span does not report them). Part of
-- input_tokens like cached_input_tokens. Query-time pricing charges them at the cache-write price,
-- as stored cost does (docs/cost.md "Token conventions"); rows written before this column read 0.
ALTER TABLE {db}.event_generation_completed {on_cluster}
    ADD COLUMN IF NOT EXISTS cache_write_input_tokens UInt64 DEFAULT 0 AFTER cached_input_tokens;
