// The @a2a-js/sdk 1.3.0 client driving wunder's /a2a, run by
// a2a/interop_js_test.go:  node client.mjs <base-url> <1.0|0.3> <webhook-url>
// Prints one line per check; exits non-zero on the first failure. The SDK's
// objects are ts-proto shapes: requests are built with X.fromJSON(wire
// JSON) and results read through X.toJSON.
import {
  ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import {
  SendMessageRequest, Task, StreamResponse, TaskPushNotificationConfig, ListTasksRequest,
} from '@a2a-js/sdk';

const [base, version, webhook] = process.argv.slice(2);
const fail = (msg) => { console.error(`FAIL [${version}] ${msg}`); process.exit(1); };
const ok = (msg) => console.log(`ok [${version}] ${msg}`);
const release = () => fetch(`${base}/test/release`, { method: 'POST' });
let n = 0;
const msg = (text, config) => SendMessageRequest.fromJSON({
  message: { messageId: `js-${version}-${++n}`, role: 'ROLE_USER', parts: [{ text }] },
  ...(config ? { configuration: config } : {}),
});
const answerOf = (t) => (t.artifacts ?? []).flatMap((a) => a.parts.map((p) => p.text ?? '')).join('');
const caseOf = (sr) => Object.keys(StreamResponse.toJSON(sr))[0];

const compat = { legacyCompat: { enabled: true } };
const resolver = new DefaultAgentCardResolver(compat);
const card = await resolver.resolve(base);
const iface = card.supportedInterfaces.find((i) => i.protocolVersion === version && i.protocolBinding === 'JSONRPC');
if (!iface) fail(`card has no JSONRPC ${version} interface: ${JSON.stringify(card.supportedInterfaces)}`);
card.supportedInterfaces = [iface];
const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new JsonRpcTransportFactory(compat)], cardResolver: resolver,
}));
const client = await factory.createFromAgentCard(card);
ok(`client speaks ${client.protocolVersion}`);

// send (blocking) and get with historyLength
const sent = await client.sendMessage(msg('hello js'));
const task = Task.toJSON(sent);
if (task.status?.state !== 'TASK_STATE_COMPLETED' || answerOf(task) !== 'echo: hello js') fail(`send: ${JSON.stringify(task)}`);
ok('send');
const got = Task.toJSON(await client.getTask({ id: task.id, historyLength: 1, tenant: '' }));
if (got.id !== task.id || (got.history ?? []).length !== 1) fail(`get: ${JSON.stringify(got)}`);
ok('get historyLength=1');

// list (1.0 only)
if (version === '1.0') {
  const list = await client.listTasks(ListTasksRequest.fromJSON({ contextId: task.contextId, pageSize: 10 }));
  if (list.tasks.length !== 1 || list.tasks[0].id !== task.id) fail(`list: ${JSON.stringify(list)}`);
  ok('list');
}

// stream
const cases = [];
let last;
for await (const sr of client.sendMessageStream(msg('stream js'))) {
  cases.push(caseOf(sr));
  last = StreamResponse.toJSON(sr);
}
if (cases[0] !== 'task' || last.statusUpdate?.status?.state !== 'TASK_STATE_COMPLETED' || !cases.includes('artifactUpdate')) {
  fail(`stream: ${cases} last ${JSON.stringify(last)}`);
}
ok(`stream ${cases.join(',')}`);

// resubscribe after a dropped connection: nothing is lost
let heldId;
for await (const sr of client.sendMessageStream(msg('hold js'))) {
  heldId = StreamResponse.toJSON(sr).task.id;
  break; // drop the stream
}
const after = [];
let answer = '';
let first = true;
for await (const sr of client.resubscribeTask({ id: heldId, tenant: '' })) {
  const j = StreamResponse.toJSON(sr);
  after.push(Object.keys(j)[0]);
  if (first) { first = false; await release(); }
  if (j.artifactUpdate) answer = j.artifactUpdate.artifact.parts.map((p) => p.text).join('');
  if (j.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED') break;
}
if (after[0] !== 'task' || answer !== 'echo: hold js') fail(`resubscribe: ${after} answer ${answer}`);
ok(`resubscribe ${after.join(',')}`);

// subscribe to a terminal task: an immediate error
try {
  for await (const _ of client.resubscribeTask({ id: heldId, tenant: '' })) { fail('subscribe to a terminal task streamed'); }
  fail('subscribe to a terminal task did not fail');
} catch (e) {
  ok(`terminal subscribe refused: ${e.constructor.name} ${e.code ?? ''}`);
}

// cancel a running task; cancel again is not cancelable
const held = Task.toJSON(await client.sendMessage(msg('hold to cancel', { returnImmediately: true })));
const canceled = Task.toJSON(await client.cancelTask({ id: held.id, tenant: '', metadata: undefined }));
if (canceled.status?.state !== 'TASK_STATE_CANCELED') fail(`cancel: ${JSON.stringify(canceled)}`);
ok('cancel');
try {
  await client.cancelTask({ id: held.id, tenant: '', metadata: undefined });
  fail('second cancel succeeded');
} catch (e) {
  ok(`not cancelable: ${e.constructor.name} ${e.code ?? ''}`);
}

// not found
try {
  await client.getTask({ id: 'run_nope', tenant: '' });
  fail('unknown task found');
} catch (e) {
  if (!/NotFound/i.test(e.constructor.name) && e.code !== -32001 && !/-32001|not found/i.test(String(e.message))) fail(`not found: ${e}`);
  ok(`not found: ${e.constructor.name}`);
}

// input-required: deploy needs a person's approval; the answer goes on
// the same task, as a data part (blocking) and as text (streamed)
const answerTo = (t, parts) => SendMessageRequest.fromJSON({
  message: { messageId: `js-${version}-${++n}`, role: 'ROLE_USER', taskId: t.id, contextId: t.contextId, parts },
});
const waiting = Task.toJSON(await client.sendMessage(msg('js #deploy')));
const asks = (waiting.status?.message?.parts ?? []).filter((p) => p.data);
if (waiting.status?.state !== 'TASK_STATE_INPUT_REQUIRED' || asks.length !== 1 || asks[0].data.tool !== 'deploy') {
  fail(`input-required: ${JSON.stringify(waiting)}`);
}
ok(`input-required asks ${asks[0].data.approval_id}`);
const approved = Task.toJSON(await client.sendMessage(answerTo(waiting, [{ data: { decision: 'approve', approval_id: asks[0].data.approval_id } }])));
if (approved.status?.state !== 'TASK_STATE_COMPLETED' || answerOf(approved) !== 'deploy said: deployed {"env":"prod"}') {
  fail(`after approve: ${JSON.stringify(approved)}`);
}
ok('approved by a data part');
let stopped;
for await (const sr of client.sendMessageStream(msg('js #deploy streamed'))) stopped = StreamResponse.toJSON(sr);
if (stopped.statusUpdate?.status?.state !== 'TASK_STATE_INPUT_REQUIRED') fail(`stream to input-required: ${JSON.stringify(stopped)}`);
const streamed = { id: stopped.statusUpdate.taskId, contextId: stopped.statusUpdate.contextId };
let end;
for await (const sr of client.sendMessageStream(answerTo(streamed, [{ text: 'reject: js says no' }]))) end = StreamResponse.toJSON(sr);
if (end.statusUpdate?.status?.state !== 'TASK_STATE_COMPLETED') fail(`after reject: ${JSON.stringify(end)}`);
const rejected = Task.toJSON(await client.getTask({ id: streamed.id, tenant: '' }));
if (!answerOf(rejected).includes('js says no')) fail(`the model did not read the reason: ${JSON.stringify(rejected)}`);
ok('rejected by text, streamed');

// push to the local receiver
const pushed = Task.toJSON(await client.sendMessage(msg('hold for push', { returnImmediately: true })));
const cfg = TaskPushNotificationConfig.toJSON(await client.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON({
  taskId: pushed.id, id: `js-${version}`, url: webhook, token: `tok-${version}`,
  authentication: { scheme: 'Bearer', credentials: `js-secret-${version}` },
})));
if (cfg.url !== webhook) fail(`push config: ${JSON.stringify(cfg)}`);
const listed = await client.listTaskPushNotificationConfig({ taskId: pushed.id, tenant: '', pageSize: 0, pageToken: '' });
if ((listed.configs ?? []).length !== 1) fail(`push list: ${JSON.stringify(listed)}`);
await release();
ok(`push configured for ${pushed.id}`);
console.log(`PUSHTASK ${pushed.id}`);
console.log('DONE');
