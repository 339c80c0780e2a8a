import { describe, expect, it } from 'vitest';
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from '@opentelemetry/semantic-conventions/incubating';
import { mapAttributes } from '../../../src/spans/attribute-mapping.js';

/** Attribute sets as OpenTelemetry GenAI instrumentations emit them (semantic conventions 1.37+ and the older names). */
const resource = { 'service.name': 'billing-assistant', 'service.version': '2.3.0', 'telemetry.sdk.language': 'python' };

describe('attribute mapping: OpenTelemetry GenAI semantic conventions', () => {
  it('maps an inference (chat) span', () => {
    const mapped = mapAttributes(
      {
        [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
        [ATTR_GEN_AI_PROVIDER_NAME]: 'openai',
        [ATTR_GEN_AI_REQUEST_MODEL]: 'gpt-4o',
        [ATTR_GEN_AI_RESPONSE_MODEL]: 'gpt-4o-2024-08-06',
        'gen_ai.response.id': 'chatcmpl-AB12',
        'gen_ai.response.finish_reasons': ['stop'],
        [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 1250,
        [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 96,
        [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: 1024,
        [ATTR_GEN_AI_CONVERSATION_ID]: 'conv_5j66UpCpwteGg4YSxUnt7lPY',
        'gen_ai.input.messages': JSON.stringify([
          { role: 'system', parts: [{ type: 'text', content: 'You are a billing assistant.' }] },
          { role: 'user', parts: [{ type: 'text', content: 'Why was I charged twice?' }] },
        ]),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [{ type: 'text', content: 'Let me check.' }], finish_reason: 'stop' },
        ]),
        'server.address': 'api.openai.com',
      },
      resource,
    );
    expect(mapped).toMatchObject({
      spanClass: 'generation',
      model: 'gpt-4o-2024-08-06',
      provider: 'openai',
      inputTokens: 1250,
      outputTokens: 96,
      cachedInputTokens: 1024,
      threadId: 'conv_5j66UpCpwteGg4YSxUnt7lPY',
      release: '2.3.0',
      agentName: '',
      toolName: '',
      toolArguments: null,
    });
    expect(mapped.agentInput).toContain('Why was I charged twice?');
    expect(mapped.agentOutput).toContain('Let me check.');
  });

  it('maps an invoke_agent span', () => {
    const mapped = mapAttributes(
      {
        [ATTR_GEN_AI_OPERATION_NAME]: 'invoke_agent',
        [ATTR_GEN_AI_PROVIDER_NAME]: 'aws.bedrock',
        [ATTR_GEN_AI_AGENT_NAME]: 'Billing Agent',
        'gen_ai.agent.id': 'asst_5j66UpCpwteGg4YSxUnt7lPY',
        [ATTR_GEN_AI_REQUEST_MODEL]: 'anthropic.claude-3-5-sonnet',
        [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 3000,
        [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 400,
      },
      resource,
    );
    expect(mapped).toMatchObject({ spanClass: 'agent', agentName: 'Billing Agent', provider: 'aws.bedrock', inputTokens: 3000 });
  });

  it('maps an execute_tool span with its arguments', () => {
    const mapped = mapAttributes(
      {
        [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
        [ATTR_GEN_AI_TOOL_NAME]: 'get_invoice',
        'gen_ai.tool.call.id': 'call_mszuSIzqtI65i1wAUOE8w5H4',
        'gen_ai.tool.type': 'function',
        [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: '{"invoice_id":"in_123"}',
      },
      resource,
    );
    expect(mapped).toMatchObject({
      spanClass: 'tool',
      toolName: 'get_invoice',
      toolArguments: '{"invoice_id":"in_123"}',
      userFacingTool: false,
      inputTokens: null,
      outputTokens: null,
    });
  });

  it('reads the older usage and system names (prompt_tokens, completion_tokens, gen_ai.system)', () => {
    const mapped = mapAttributes(
      {
        'gen_ai.system': 'anthropic',
        'gen_ai.request.model': 'claude-3-5-haiku-20241022',
        'gen_ai.usage.prompt_tokens': 512,
        'gen_ai.usage.completion_tokens': '64',
        'gen_ai.usage.cache_read_input_tokens': 128,
        'gen_ai.prompt': 'Summarize this ticket',
        'gen_ai.completion': 'The customer wants a refund.',
      },
      resource,
    );
    expect(mapped).toMatchObject({
      spanClass: 'generation',
      provider: 'anthropic',
      model: 'claude-3-5-haiku-20241022',
      inputTokens: 512,
      outputTokens: 64,
      cachedInputTokens: 128,
      agentInput: 'Summarize this ticket',
      agentOutput: 'The customer wants a refund.',
    });
  });

  it('lets the first present source win and skips empty or malformed values', () => {
    const mapped = mapAttributes(
      {
        'gen_ai.response.model': '',
        'gen_ai.request.model': 'gpt-4.1',
        'gen_ai.usage.input_tokens': 'many',
        'gen_ai.usage.prompt_tokens': 10,
      },
      {},
    );
    expect(mapped.model).toBe('gpt-4.1');
    expect(mapped.inputTokens).toBe(10);
    expect(mapped.outputTokens).toBeNull();
    expect(mapped.release).toBe('');
  });

  it('recognises user-message tools by name or by lookout.tool.user_facing', () => {
    expect(mapAttributes({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'reply_to_user' }, {}).userFacingTool).toBe(true);
    expect(mapAttributes({ 'gen_ai.tool.name': 'Send-Message' }, {}).userFacingTool).toBe(true);
    expect(mapAttributes({ 'gen_ai.tool.name': 'post_to_slack', 'lookout.tool.user_facing': true }, {}).userFacingTool).toBe(true);
    expect(mapAttributes({ 'gen_ai.tool.name': 'respond', 'lookout.tool.user_facing': false }, {}).userFacingTool).toBe(false);
    expect(mapAttributes({ 'gen_ai.tool.name': 'search_docs' }, {}).userFacingTool).toBe(false);
  });
});
