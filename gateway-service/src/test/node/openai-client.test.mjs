// The official OpenAI Node SDK against a running gateway (started with fake router and workers by
// NodeOpenAiClientTest, which passes its address and the text the fake workers generate).
//   GATEWAY_BASE_URL   e.g. http://127.0.0.1:41234/v1
//   EXPECTED_TEXT      JSON object: max_tokens -> the exact text a request with that limit receives
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const baseURL = process.env.GATEWAY_BASE_URL;
const expected = JSON.parse(process.env.EXPECTED_TEXT ?? '{}');
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

// The SDK's helper examples. The fake worker plays the model (NodeOpenAiClientTest scripts it): the
// question below gets two Hermes tool calls, a prompt with the tool results the final answer, and a
// structured-output request JSON of the schema.
const examples = JSON.parse(process.env.SDK_EXAMPLES ?? '{}');

function GetSdkQuality({ name }) {
  return { sdk: name, quality: name.includes('OpenAI') ? "It's robust and polished!" : '*shrug*' };
}

const sdkTools = [{
  type: 'function',
  function: {
    function: GetSdkQuality,
    parse: JSON.parse,
    description: 'Gets the quality of the given SDK.',
    parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  },
}];

test('runTools calls the functions the model asks for and returns its answer', async () => {
  const called = [];
  const runner = client.chat.completions.runTools({
    model: 'flotilla-sim',
    messages: [{ role: 'user', content: examples.question }],
    tools: sdkTools,
  }).on('functionToolCall', (call) => called.push(JSON.parse(call.arguments).name));
  assert.equal(await runner.finalContent(), examples.finalAnswer);
  assert.deepEqual(called, ['OpenAI Java SDK', 'Unknown Company SDK']);
});

test('runTools streamed: the tool-call deltas are accumulated into the same calls', async () => {
  const called = [];
  const runner = client.chat.completions.runTools({
    model: 'flotilla-sim',
    messages: [{ role: 'user', content: examples.question }],
    tools: sdkTools,
    stream: true,
  }).on('functionToolCall', (call) => called.push(JSON.parse(call.arguments).name));
  assert.equal(await runner.finalContent(), examples.finalAnswer);
  assert.deepEqual(called, ['OpenAI Java SDK', 'Unknown Company SDK']);
});

test('stream() accumulates streamed tool calls with ids and finish_reason tool_calls', async () => {
  const stream = client.chat.completions.stream({
    model: 'flotilla-sim',
    messages: [{ role: 'user', content: examples.question }],
    tools: [{ type: 'function', function: { name: 'GetSdkQuality', parameters: sdkTools[0].function.parameters } }],
  });
  const completion = await stream.finalChatCompletion();
  const calls = completion.choices[0].message.tool_calls;
  assert.equal(calls.length, 2);
  assert.match(calls[0].id, /^call_/);
  assert.equal(calls[1].function.name, 'GetSdkQuality');
  assert.equal(JSON.parse(calls[1].function.arguments).name, 'Unknown Company SDK');
  assert.equal(completion.choices[0].finish_reason, 'tool_calls');
});

test('parse() with a JSON schema returns the parsed object', async () => {
  const completion = await client.chat.completions.parse({
    model: 'flotilla-sim',
    messages: [{ role: 'user', content: 'List some famous late twentieth century novels.' }],
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: 'BookList',
        strict: true,
        schema: {
          type: 'object',
          properties: { books: { type: 'array', items: { type: 'object', properties: { title: { type: 'string' } } } } },
          required: ['books'],
          additionalProperties: false,
        },
      },
    },
  });
  assert.equal(completion.choices[0].message.parsed.books[0].title, 'Beloved');
});

test('logprobs with top_logprobs', async () => {
  const completion = await client.chat.completions.create({
    model: 'flotilla-sim', messages, max_tokens: 6, logprobs: true, top_logprobs: 2,
  });
  const content = completion.choices[0].logprobs.content;
  assert.equal(content.length, 6);
  for (const t of content) {
    assert.equal(typeof t.token, 'string');
    assert.ok(t.logprob <= 0);
    assert.equal(t.top_logprobs.length, 2);
    assert.ok(Array.isArray(t.bytes));
  }
});

test('n = 3 gives three indexed choices and summed usage', async () => {
  const completion = await client.chat.completions.create({ model: 'flotilla-sim', messages, max_tokens: 4, n: 3 });
  assert.deepEqual(completion.choices.map((c) => c.index), [0, 1, 2]);
  assert.equal(completion.usage.completion_tokens, 12);
});
