// The official Node SDK's helper examples (runTools, stream(), parse() with a JSON schema, logprobs, n)
// against a gateway whose model is scripted: it answers QUESTION with two calls of GetSdkQuality, a prompt
// that holds the tool results with FINAL_ANSWER, and a structured-output request with JSON of the schema.
// Run by NodeOpenAiClientTest (fake workers) and by the whole-cluster tests (scripted simulated engines,
// fake vLLM engines).
//   GATEWAY_BASE_URL   e.g. http://127.0.0.1:8000/v1
//   MODEL              the model to ask
//   SDK_EXAMPLES       JSON: {question, finalAnswer}
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.GATEWAY_BASE_URL, apiKey: 'unused', maxRetries: 0 });
const model = process.env.MODEL ?? 'flotilla-sim';
const examples = JSON.parse(process.env.SDK_EXAMPLES ?? '{}');
const messages = [{ role: 'user', content: 'Say something' }];

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
    model,
    messages: [{ role: 'user', content: examples.question }],
    tools: sdkTools,
  }).on('functionToolCall', (call) => called.push(JSON.parse(call.arguments).name));
  assert.equal(await runner.finalContent(), examples.finalAnswer);
  assert.deepEqual(called, ['OpenAI Java SDK', 'Unknown Company SDK']);
});

test('runTools streamed: the tool-call deltas are accumulated into the same calls', async () => {
  const called = [];
  const runner = client.chat.completions.runTools({
    model,
    messages: [{ role: 'user', content: examples.question }],
    tools: sdkTools,
    stream: true,
  }).on('functionToolCall', (call) => called.push(JSON.parse(call.arguments).name));
  assert.equal(await runner.finalContent(), examples.finalAnswer);
  assert.deepEqual(called, ['OpenAI Java SDK', 'Unknown Company SDK']);
});

test('stream() accumulates streamed tool calls with ids and finish_reason tool_calls', async () => {
  const stream = client.chat.completions.stream({
    model,
    messages: [{ role: 'user', content: examples.question }],
    tools: [{ type: 'function', function: { name: 'GetSdkQuality', parameters: sdkTools[0].function.parameters } }],
  });
  const completion = await stream.finalChatCompletion();
  const calls = completion.choices[0].message.tool_calls;
  assert.equal(calls.length, 2);
  assert.match(calls[0].id, /^call_/);
  assert.notEqual(calls[0].id, calls[1].id);
  assert.equal(calls[1].function.name, 'GetSdkQuality');
  assert.equal(JSON.parse(calls[1].function.arguments).name, 'Unknown Company SDK');
  assert.equal(completion.choices[0].finish_reason, 'tool_calls');
});

test('parse() with a JSON schema returns the parsed object', async () => {
  const completion = await client.chat.completions.parse({
    model,
    messages: [{ role: 'user', content: 'List some famous late twentieth century novels.' }],
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: 'BookList',
        strict: true,
        schema: {
          type: 'object',
          properties: {
            books: {
              type: 'array',
              items: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
            },
          },
          required: ['books'],
          additionalProperties: false,
        },
      },
    },
  });
  const books = completion.choices[0].message.parsed.books;
  assert.ok(books.length > 0);
  for (const book of books) {
    assert.equal(typeof book.title, 'string');
  }
});

test('logprobs with top_logprobs', async () => {
  const completion = await client.chat.completions.create({
    model, messages, max_tokens: 6, logprobs: true, top_logprobs: 2,
  });
  const content = completion.choices[0].logprobs.content;
  assert.ok(content.length >= 1 && content.length <= 6);
  for (const t of content) {
    assert.equal(typeof t.token, 'string');
    assert.ok(t.logprob <= 0);
    assert.equal(t.top_logprobs.length, 2);
    assert.ok(t.top_logprobs[0].logprob >= t.top_logprobs[1].logprob);
  }
});

test('n = 3 gives three indexed choices and summed usage', async () => {
  const completion = await client.chat.completions.create({ model, messages, max_tokens: 4, n: 3 });
  assert.deepEqual(completion.choices.map((c) => c.index), [0, 1, 2]);
  const generated = completion.usage.completion_tokens;
  assert.ok(generated >= 3 && generated <= 12, `completion_tokens ${generated}`);
});
