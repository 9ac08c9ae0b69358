// Compatibility test: the official `openai` npm client against a real `alap-cli serve` on
// 127.0.0.1 (a free port) over a tiny model written by write_tiny_chat_model. It lists models,
// gets a completion, streams one (with usage), checks 401/400 come back as the client's error
// classes, then stops the server with SIGTERM and expects a clean exit.
// Usage: node openai_client.mjs NPM_PREFIX ALAP_CLI WRITE_TINY_CHAT_MODEL   (run_openai_client.sh)
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import assert from 'node:assert/strict';

const [npmPrefix, cli, writeModel] = process.argv.slice(2);
if (!npmPrefix || !cli || !writeModel) {
  console.error('usage: node openai_client.mjs NPM_PREFIX ALAP_CLI WRITE_TINY_CHAT_MODEL');
  process.exit(2);
}
const entry = join(npmPrefix, 'node_modules', 'openai', 'index.mjs');
if (!existsSync(entry)) {
  console.log(`openai package not installed in ${npmPrefix} (scripts/install-npm-deps): skipped`);
  process.exit(77);
}
const { default: OpenAI } = await import(pathToFileURL(entry).href);
const clientVersion = JSON.parse(readFileSync(join(npmPrefix, 'node_modules', 'openai', 'package.json'), 'utf8')).version;

const watchdog = setTimeout(() => {
  console.error('openai_client: timed out');
  process.exit(1);
}, 90_000);

const dir = mkdtempSync(join(tmpdir(), 'alap-openai-'));
const model = join(dir, 'tiny-chat.gguf');
execFileSync(writeModel, [model], { stdio: 'inherit' });

const apiKey = 'sk-alap-e2e';
const server = spawn(cli, ['serve', '-m', model, '--host', '127.0.0.1', '--port', '0', '--api-key', apiKey, '--threads', '1'],
  { stdio: ['ignore', 'inherit', 'pipe'] });
let stderr = '';
const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve({ code, signal })));
// Resolves with the port once the server says it is listening and the model is ready.
const ready = new Promise((resolve, reject) => {
  let port = 0;
  server.stderr.on('data', (d) => {
    stderr += d.toString();
    const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr);
    if (m) port = Number(m[1]);
    if (port && /model 'tiny-chat' ready/.test(stderr)) resolve(port);
  });
  server.on('exit', (code) => reject(new Error(`alap-cli serve exited early (${code}):\n${stderr}`)));
});

let failed = false;
try {
  const port = await ready;
  const client = new OpenAI({ apiKey, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0, timeout: 30_000 });

  // 1. models.list
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.deepEqual(ids, ['tiny-chat']);
  const one = await client.models.retrieve('tiny-chat');
  assert.equal(one.object, 'model');

  // 2. a whole completion
  const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say something.' }];
  const completion = await client.chat.completions.create({
    model: 'tiny-chat', messages, max_tokens: 8, temperature: 0, seed: 1,
  });
  assert.equal(completion.object, 'chat.completion');
  assert.match(completion.id, /^chatcmpl-[0-9a-f]{24}$/);
  assert.equal(completion.model, 'tiny-chat');
  assert.equal(completion.choices.length, 1);
  const text = completion.choices[0].message.content;
  assert.equal(completion.choices[0].message.role, 'assistant');
  assert.equal(typeof text, 'string');
  assert.ok(text.length > 0, 'empty completion');
  assert.equal(completion.choices[0].finish_reason, 'length');
  assert.equal(completion.usage.completion_tokens, 8);
  assert.ok(completion.usage.prompt_tokens > 5);
  assert.equal(completion.usage.total_tokens, completion.usage.prompt_tokens + 8);

  // 3. the same request streamed: the same text, a finish reason, then usage
  const stream = await client.chat.completions.create({
    model: 'tiny-chat', messages, max_tokens: 8, temperature: 0, seed: 1,
    stream: true, stream_options: { include_usage: true },
  });
  let streamed = '';
  let role = null;
  let finish = null;
  let usage = null;
  let chunks = 0;
  for await (const chunk of stream) {
    ++chunks;
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      if (c.delta.role) role = c.delta.role;
      if (c.delta.content) streamed += c.delta.content;
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  assert.equal(role, 'assistant');
  assert.equal(streamed, text);
  assert.equal(finish, 'length');
  assert.ok(chunks >= 4, `only ${chunks} chunks`);
  assert.deepEqual(usage, completion.usage);

  // 4. errors arrive as the client's error classes
  const stranger = new OpenAI({ apiKey: 'wrong', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  await assert.rejects(stranger.models.list(), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
  await assert.rejects(client.chat.completions.create({ model: 'tiny-chat', messages, n: 2 }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && /'n' must be 1/.test(e.message));

  console.log(`openai ${clientVersion}: models, completion (${JSON.stringify(text)}), stream of ${chunks} chunks, 401, 400: ok`);
} catch (e) {
  failed = true;
  console.error('openai_client: FAILED:', e);
  console.error('--- server stderr ---\n' + stderr);
} finally {
  // 5. graceful shutdown on SIGTERM
  server.kill('SIGTERM');
  const { code, signal } = await exited;
  if (!failed && (code !== 0 || !/stopped/.test(stderr))) {
    failed = true;
    console.error(`openai_client: server exit code ${code} signal ${signal}\n${stderr}`);
  }
  rmSync(dir, { recursive: true, force: true });
  clearTimeout(watchdog);
}
process.exit(failed ? 1 : 0);
