import { describe, expect, it } from 'vitest';
import { parseRecordedValue, readAgentInput } from '../../../src/spans/agent-io.js';
import { extractUserFacingMessage, USER_FACING_MESSAGE_MAX_CHARS } from '../../../src/spans/user-facing-message.js';

describe('agent input reading', () => {
  it('classifies inputs by kind and shows the user request', () => {
    expect(readAgentInput(null)).toEqual({ kind: 'none', display: '' });
    expect(readAgentInput('Refund my order')).toEqual({ kind: 'text', display: 'Refund my order' });
    expect(readAgentInput('{"prompt":"What is the weather?"}')).toEqual({ kind: 'text', display: 'What is the weather?' });
    const genAi = JSON.stringify([
      { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'First question' }] },
      { role: 'assistant', parts: [{ type: 'text', content: 'Answer' }] },
      { role: 'user', parts: [{ type: 'text', content: 'Follow-up question' }] },
    ]);
    expect(readAgentInput(genAi)).toEqual({ kind: 'messages', display: 'Follow-up question' });
    const openInference = JSON.stringify({ messages: [{ role: 'user', content: 'Where is my parcel?' }], model: 'gpt-4o' });
    expect(readAgentInput(openInference)).toEqual({ kind: 'messages', display: 'Where is my parcel?' });
    const aiSdk = JSON.stringify([{ role: 'user', content: [{ type: 'text', text: 'Plan my trip' }] }]);
    expect(readAgentInput(aiSdk)).toEqual({ kind: 'messages', display: 'Plan my trip' });
    expect(readAgentInput('{"ticket_id": 42}')).toEqual({ kind: 'json', display: '{"ticket_id":42}' });
  });

  it('truncates the display', () => {
    const reading = readAgentInput('x'.repeat(2000));
    expect(reading.display).toHaveLength(500);
    expect(reading.display.endsWith('…')).toBe(true);
  });

  it('returns recorded values parsed when they are JSON', () => {
    expect(parseRecordedValue(null)).toBeNull();
    expect(parseRecordedValue('plain text')).toBe('plain text');
    expect(parseRecordedValue('[{"role":"user"}]')).toEqual([{ role: 'user' }]);
    expect(parseRecordedValue('{broken')).toBe('{broken');
  });
});

describe('user-facing messages of user-message tools', () => {
  it('takes the message from the arguments', () => {
    expect(extractUserFacingMessage('{"message":"Your refund is on its way."}')).toEqual({ message: 'Your refund is on its way.', truncated: false, omitted: 0 });
    expect(extractUserFacingMessage('{"channel":"email","text":"Hi!"}')).toEqual({ message: 'Hi!', truncated: false, omitted: 0 });
    expect(extractUserFacingMessage('Plain reply')).toEqual({ message: 'Plain reply', truncated: false, omitted: 0 });
    expect(extractUserFacingMessage(null)).toEqual({ message: '', truncated: false, omitted: 0 });
    expect(extractUserFacingMessage('{"user_id":7}')).toEqual({ message: '', truncated: false, omitted: 0 });
  });

  it('shows the first of several messages and counts the rest', () => {
    expect(extractUserFacingMessage('{"messages":["One","Two",{"text":"Three"}]}')).toEqual({ message: 'One', truncated: false, omitted: 2 });
  });

  it('truncates long messages and says so', () => {
    const long = extractUserFacingMessage(JSON.stringify({ message: 'y'.repeat(5000) }));
    expect(long.message).toHaveLength(USER_FACING_MESSAGE_MAX_CHARS);
    expect(long.truncated).toBe(true);
  });
});
