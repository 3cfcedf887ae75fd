// The official OpenAI Node SDK against a running gateway (started with fake router and workers by
// NodeOpenAiClientTest, which passes its address and the text the fake workers generate).
//   GATEWAY_BASE_URL   e.g. http://127.0.0.1:41234/v1
//   EXPECTED_TEXT      JSON object: max_tokens -> the exact text a request with that limit receives
//   SDK_EXAMPLES       JSON: {question, finalAnswer}: the model answers QUESTION with two calls of GetSdkQuality
//                      and a prompt holding their results with FINAL_ANSWER
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const baseURL = process.env.GATEWAY_BASE_URL;
const expected = JSON.parse(process.env.EXPECTED_TEXT ?? '{}');
const examples = JSON.parse(process.env.SDK_EXAMPLES ?? '{}');
const client = new OpenAI({ baseURL, apiKey: 'unused-the-gateway-is-open', maxRetries: 0 });
const messages = [{ role: 'user', content: 'Hello from Node' }];

test('chat completion', async () => {
  const completion = await client.chat.completions.create({ model: 'flotilla-sim', messages, max_tokens: 5 });
  assert.equal(completion.object, 'chat.completion');
  assert.equal(completion.choices[0].message.role, 'assistant');
  assert.equal(completion.choices[0].message.content, expected['5']);
  assert.equal(completion.choices[0].finish_reason, 'length');
  assert.equal(completion.usage.completion_tokens, 5);
  assert.equal(completion.usage.total_tokens, completion.usage.prompt_tokens + 5);
  assert.equal(typeof completion.usage.prompt_tokens_details.cached_tokens, 'number');
});

test('streamed chat completion with usage', async () => {
  const stream = await client.chat.completions.create({
    model: 'flotilla-sim', messages, max_tokens: 12, stream: true, stream_options: { include_usage: true },
  });
  let text = '';
  let usage;
  let finish;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    for (const choice of chunk.choices) {
      text += choice.delta.content ?? '';
      finish = choice.finish_reason ?? finish;
    }
    usage = chunk.usage ?? usage;
  }
  assert.equal(text, expected['12']);
  assert.equal(finish, 'length');
  assert.equal(usage.completion_tokens, 12);
});

test('raw response carries the worker header', async () => {
  const { response } = await client.chat.completions
    .create({ model: 'flotilla-sim', messages, max_tokens: 2 })
    .withResponse();
  assert.equal(response.headers.get('x-flotilla-worker'), 'worker-a');
});

test('text completion', async () => {
  const completion = await client.completions.create({ model: 'flotilla-sim', prompt: 'Once upon a time', max_tokens: 5 });
  assert.equal(completion.object, 'text_completion');
  assert.equal(completion.choices[0].text, expected['5']);
});

test('embeddings (the SDK asks for base64 and decodes it)', async () => {
  const response = await client.embeddings.create({ model: 'flotilla-sim', input: ['first', 'second text'] });
  assert.equal(response.object, 'list');
  assert.equal(response.model, 'flotilla-sim');
  assert.equal(response.data.length, 2);
  assert.equal(response.data[1].index, 1);
  for (const item of response.data) {
    assert.equal(item.object, 'embedding');
    assert.equal(item.embedding.length, 8);
    const norm = Math.sqrt(item.embedding.reduce((s, x) => s + x * x, 0));
    assert.ok(Math.abs(norm - 1) < 1e-5, `unit length, got ${norm}`);
  }
  assert.notDeepEqual(response.data[0].embedding, response.data[1].embedding);
  assert.ok(response.usage.prompt_tokens > 0);
  assert.equal(response.usage.total_tokens, response.usage.prompt_tokens);
});

test('models list', async () => {
  const ids = [];
  for await (const model of client.models.list()) {
    ids.push(model.id);
  }
  assert.ok(ids.includes('flotilla-sim'), `models: ${ids}`);
  assert.ok(!ids.includes('ghost-model'));
});

test('a bad parameter is a BadRequestError naming it', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'flotilla-sim', messages, temperature: 3 }),
    (err) => err instanceof OpenAI.BadRequestError && err.status === 400 && err.param === 'temperature'
      && err.type === 'invalid_request_error',
  );
});

test('an unknown model is a NotFoundError', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'no-such-model', messages }),
    (err) => err instanceof OpenAI.NotFoundError && err.code === 'model_not_found',
  );
});

test('responses: create, stream a follow-up with previous_response_id, retrieve, delete', async () => {
  const first = await client.responses.create({ model: 'flotilla-sim', input: 'Hello from Node', max_output_tokens: 5 });
  assert.equal(first.object, 'response');
  assert.equal(first.output_text, expected['5']);
  assert.equal(first.status, 'incomplete');
  assert.equal(first.incomplete_details.reason, 'max_output_tokens');
  assert.equal(first.usage.output_tokens, 5);

  const stream = await client.responses.create({
    model: 'flotilla-sim', input: 'And then?', max_output_tokens: 12, stream: true, previous_response_id: first.id,
  });
  let text = '';
  let last;
  let sequence = 0;
  for await (const event of stream) {
    assert.equal(event.sequence_number, sequence++);
    if (event.type === 'response.output_text.delta') {
      text += event.delta;
    }
    last = event;
  }
  assert.equal(text, expected['12']);
  assert.equal(last.type, 'response.incomplete');
  assert.equal(last.response.previous_response_id, first.id);

  const retrieved = await client.responses.retrieve(last.response.id);
  assert.equal(retrieved.output[0].content[0].text, expected['12']);
  const items = [];
  for await (const item of client.responses.inputItems.list(last.response.id, { order: 'asc' })) {
    items.push(item);
  }
  assert.deepEqual(items.map((i) => i.role), ['user', 'assistant', 'user']);
  await client.responses.delete(last.response.id);
  await assert.rejects(client.responses.retrieve(last.response.id), (e) => e.status === 404);
});

test('responses: function calling round trip, the results sent back with previous_response_id', async () => {
  const tools = [{
    type: 'function',
    name: 'GetSdkQuality',
    description: 'Gets the quality of the given SDK.',
    parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    strict: false,
  }];
  const first = await client.responses.create({ model: 'flotilla-sim', input: examples.question, tools });
  const calls = first.output.filter((item) => item.type === 'function_call');
  assert.deepEqual(calls.map((c) => c.name), ['GetSdkQuality', 'GetSdkQuality']);
  assert.deepEqual(calls.map((c) => JSON.parse(c.arguments).name), ['OpenAI Java SDK', 'Unknown Company SDK']);
  assert.notEqual(calls[0].call_id, calls[1].call_id);

  const streamed = await client.responses.stream({ model: 'flotilla-sim', input: examples.question, tools })
    .finalResponse();
  assert.deepEqual(
    streamed.output.filter((item) => item.type === 'function_call').map((c) => [c.name, c.arguments]),
    calls.map((c) => [c.name, c.arguments]));

  const outputs = calls.map((c) => {
    const { name } = JSON.parse(c.arguments);
    const quality = name.includes('OpenAI') ? "It's robust and polished!" : '*shrug*';
    return { type: 'function_call_output', call_id: c.call_id, output: JSON.stringify({ sdk: name, quality }) };
  });
  const answer = await client.responses.create({
    model: 'flotilla-sim', previous_response_id: first.id, input: outputs, tools,
  });
  assert.equal(answer.output_text, examples.finalAnswer);
  assert.equal(answer.previous_response_id, first.id);
  const items = [];
  for await (const item of client.responses.inputItems.list(answer.id, { order: 'asc' })) {
    items.push(item.type);
  }
  assert.equal(items[0], 'message');
  assert.deepEqual(items.filter((type) => type.startsWith('function_call')),
    ['function_call', 'function_call', 'function_call_output', 'function_call_output']);
});
