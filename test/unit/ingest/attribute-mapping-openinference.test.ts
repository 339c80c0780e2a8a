import { describe, expect, it } from 'vitest';
import { mapAttributes } from '../../../src/spans/attribute-mapping.js';

/** Attribute sets as the OpenInference instrumentations (openai, langchain, ...) emit them. */
const resource = { 'service.name': 'rag-service', 'openinference.project.name': 'default' };

describe('attribute mapping: OpenInference', () => {
  it('maps an LLM span', () => {
    const mapped = mapAttributes(
      {
        'openinference.span.kind': 'LLM',
        'llm.provider': 'openai',
        'llm.system': 'openai',
        'llm.model_name': 'gpt-4o-mini-2024-07-18',
        'llm.invocation_parameters': '{"model": "gpt-4o-mini", "temperature": 0}',
        'llm.input_messages.0.message.role': 'system',
        'llm.input_messages.0.message.content': 'Answer from the context.',
        'llm.input_messages.1.message.role': 'user',
        'llm.input_messages.1.message.content': 'What is our refund window?',
        'llm.output_messages.0.message.role': 'assistant',
        'llm.output_messages.0.message.content': '30 days.',
        'llm.token_count.prompt': 812,
        'llm.token_count.completion': 7,
        'llm.token_count.total': 819,
        'llm.token_count.prompt_details.cache_read': 512,
        'input.value': '{"messages": [{"role": "user", "content": "What is our refund window?"}], "model": "gpt-4o-mini"}',
        'input.mime_type': 'application/json',
        'output.value': '{"id": "chatcmpl-1", "choices": [{"message": {"content": "30 days."}}]}',
        'output.mime_type': 'application/json',
        'session.id': 'session-7f3a',
        'user.id': 'user-42',
      },
      resource,
    );
    expect(mapped).toMatchObject({
      spanClass: 'generation',
      model: 'gpt-4o-mini-2024-07-18',
      provider: 'openai',
      inputTokens: 812,
      outputTokens: 7,
      cachedInputTokens: 512,
      threadId: 'session-7f3a',
    });
    expect(mapped.agentInput).toContain('refund window');
    expect(mapped.agentOutput).toContain('30 days.');
  });

  it('maps a TOOL span: name and arguments from input.value', () => {
    const mapped = mapAttributes(
      {
        'openinference.span.kind': 'TOOL',
        'tool.name': 'search_knowledge_base',
        'tool.description': 'Searches the help center',
        'tool.parameters': '{"type": "object", "properties": {"query": {"type": "string"}}}',
        'input.value': '{"query": "refund policy"}',
        'output.value': 'Refunds are accepted within 30 days.',
      },
      resource,
    );
    expect(mapped).toMatchObject({ spanClass: 'tool', toolName: 'search_knowledge_base', toolArguments: '{"query": "refund policy"}' });
  });

  it('maps an AGENT span with agent.name, and a CHAIN span as other', () => {
    const agent = mapAttributes(
      { 'openinference.span.kind': 'AGENT', 'agent.name': 'support-router', 'input.value': 'I want my money back', 'session.id': 's-1' },
      resource,
    );
    expect(agent).toMatchObject({ spanClass: 'agent', agentName: 'support-router', agentInput: 'I want my money back', threadId: 's-1' });
    const chain = mapAttributes({ 'openinference.span.kind': 'CHAIN', 'input.value': 'x', 'output.value': 'y' }, resource);
    expect(chain.spanClass).toBe('other');
  });

  it('maps an EMBEDDING span as a generation with its model', () => {
    const mapped = mapAttributes(
      { 'openinference.span.kind': 'EMBEDDING', 'embedding.model_name': 'text-embedding-3-small', 'llm.token_count.prompt': 9 },
      resource,
    );
    expect(mapped).toMatchObject({ spanClass: 'generation', model: 'text-embedding-3-small', inputTokens: 9, outputTokens: null });
  });
});
