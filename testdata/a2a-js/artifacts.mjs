// The @a2a-js/sdk 1.3.0 client reading wunder's artifacts and A2UI parts,
// run by cmd/wunder/js_interop_test.go:
//   node artifacts.mjs <tck-url> <demo-url> <1.0|0.3>
// <tck-url> serves the scripted model playing scripts/a2a-tck-model.yaml
// (its artifact scenarios call the real artifact tool, chosen by the
// message id); <demo-url> serves the scripted demo model with the a2ui
// tool. Prints one line per check; exits non-zero on the first failure.
// Everything is read through the SDK's own types (X.toJSON).
import {
  ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory,
  ServiceParameters, withA2AExtensions,
} from '@a2a-js/sdk/client';
import { SendMessageRequest, Task, StreamResponse } from '@a2a-js/sdk';

const [tckURL, demoURL, version] = process.argv.slice(2);
const A2UI = 'https://a2ui.org/a2a-extension/a2ui/v0.9';
const fail = (msg) => { console.error(`FAIL [${version}] ${msg}`); process.exit(1); };
const ok = (msg) => console.log(`ok [${version}] ${msg}`);
const str = (v) => JSON.stringify(v);

// seen records the extension headers of the last JSON-RPC call: what the
// SDK sent and what wunder answered.
const seen = {};
const fetchImpl = async (url, init) => {
  const res = await fetch(url, init);
  if (init?.method === 'POST') {
    const h = new Headers(init.headers);
    seen.sent = { 'A2A-Extensions': h.get('A2A-Extensions'), 'X-A2A-Extensions': h.get('X-A2A-Extensions') };
    seen.answered = res.headers.get(version === '1.0' ? 'A2A-Extensions' : 'X-A2A-Extensions');
  }
  return res;
};
const compat = { legacyCompat: { enabled: true }, fetchImpl };
const connect = async (base) => {
  const resolver = new DefaultAgentCardResolver(compat);
  const card = await resolver.resolve(base);
  const iface = card.supportedInterfaces.find((i) => i.protocolVersion === version && i.protocolBinding === 'JSONRPC');
  if (!iface) fail(`${base}: card has no JSONRPC ${version} interface: ${str(card.supportedInterfaces)}`);
  card.supportedInterfaces = [iface];
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory(compat)], cardResolver: resolver,
  }));
  return { card, client: await factory.createFromAgentCard(card) };
};
let n = 0;
const request = (id, parts, extra = {}) => SendMessageRequest.fromJSON({
  message: { messageId: id, role: 'ROLE_USER', parts, ...extra },
});
const completed = (what, t) => {
  if (t.status?.state !== 'TASK_STATE_COMPLETED') fail(`${what}: ${str(t)}`);
  return t;
};

// 1. Artifacts, by the TCK script: the message id names the scenario.
{
  const { client } = await connect(tckURL);
  ok(`tck client speaks ${client.protocolVersion}`);
  const first = async (scenario) => {
    const t = completed(scenario, Task.toJSON(await client.sendMessage(
      request(`tck-${scenario}-js${version}-${++n}`, [{ text: 'TCK artifact test' }]))));
    const a = (t.artifacts ?? [])[0];
    if (!a?.artifactId || !(a.parts ?? []).length) fail(`${scenario}: no first artifact with a part: ${str(t)}`);
    return a.parts[0];
  };

  const file = await first('artifact-file');
  if (Buffer.from(file.raw ?? '', 'base64').toString() !== 'tck' || file.filename !== 'output.txt' || file.mediaType !== 'text/plain') {
    fail(`file artifact: ${str(file)}`);
  }
  ok(`file artifact with its bytes: ${str(file)}`);

  const link = await first('artifact-file-url');
  if (!link.url?.includes('/wunder/workspace/download?') || link.raw || link.filename !== 'output.txt' || link.mediaType !== 'text/plain') {
    fail(`file URL artifact: ${str(link)}`);
  }
  const served = await (await fetch(new URL(link.url, tckURL))).text();
  if (served !== 'tck') fail(`the file URL serves ${str(served)}`);
  ok(`file artifact by URL, which serves the bytes: ${link.url}`);

  const data = await first('artifact-data');
  if (str(data.data) !== str({ key: 'value', count: 42 }) && str(data.data) !== str({ count: 42, key: 'value' })) {
    fail(`data artifact: ${str(data)}`);
  }
  ok(`data artifact: ${str(data.data)}`);

  // Streamed: the data artifact is announced before the answer.
  const announced = [];
  let last;
  for await (const sr of client.sendMessageStream(request(`tck-artifact-data-js${version}-${++n}`, [{ text: 'TCK artifact test' }]))) {
    last = StreamResponse.toJSON(sr);
    if (last.artifactUpdate) announced.push(last.artifactUpdate.artifact.parts);
  }
  if (announced.length !== 2 || announced[0][0]?.data?.count !== 42 || !str(announced[1]).includes('Attached the data.') ||
    last.statusUpdate?.status?.state !== 'TASK_STATE_COMPLETED') {
    fail(`streamed artifacts ${str(announced)}, last ${str(last)}`);
  }
  ok('streamed: the data artifact, then the answer');
}

// 2. A2UI parts, by the demo model's form.
{
  const { card, client } = await connect(demoURL);
  if (!(card.capabilities?.extensions ?? []).some((e) => e.uri === A2UI)) fail(`the card declares ${str(card.capabilities)}`);
  ok('the card declares the A2UI extension');
  const activated = { serviceParameters: ServiceParameters.create(withA2AExtensions(A2UI)) };
  const ask = (opts, extra) => client.sendMessage(request(`js-${version}-${++n}`, [{ text: 'show me the A2UI demo' }], extra), opts);
  const uiArtifact = (what, t) => {
    const a = (t.artifacts ?? []).find((x) => x.artifactId?.startsWith('a2ui_'));
    if (!a) fail(`${what}: no A2UI artifact: ${str(t)}`);
    return a;
  };
  // The surface's messages, as the parts carry them: 1.0 has one DataPart
  // holding the list, 0.3 (whose DataPart holds an object) one per message.
  const messagesOf = (what, a) => {
    const marked = (p) => p.mediaType === 'application/json+a2ui' || p.metadata?.mimeType === 'application/json+a2ui';
    if (!a.parts.every((p) => p.data !== undefined && marked(p))) fail(`${what}: parts ${str(a.parts)}`);
    const msgs = version === '1.0' ? a.parts[0].data : a.parts.map((p) => p.data);
    if (version === '1.0' && (a.parts.length !== 1 || a.parts[0].mediaType !== 'application/json+a2ui')) fail(`${what}: 1.0 parts ${str(a.parts)}`);
    if (!Array.isArray(msgs) || msgs.length !== 3 || msgs[0].version !== 'v0.9' || msgs[0].createSurface?.surfaceId !== 'wunder_demo') {
      fail(`${what}: messages ${str(msgs)}`);
    }
    return msgs;
  };

  const form = completed('activated', Task.toJSON(await ask(activated)));
  // The SDK spells the header as the version wants (0.3: X-A2A-Extensions),
  // and wunder's answer names the extension it activated.
  const spelled = version === '1.0' ? 'A2A-Extensions' : 'X-A2A-Extensions';
  if (seen.sent?.[spelled] !== A2UI || seen.answered !== A2UI) fail(`activated: headers ${str(seen)}`);
  const msgs = messagesOf('activated', uiArtifact('activated', form));
  ok(`activated (${spelled} sent and answered): a DataPart marked application/json+a2ui, ${msgs.map((m) => Object.keys(m).find((k) => k !== 'version')).join(',')}`);

  const again = Task.toJSON(await client.getTask({ id: form.id, tenant: '' }, activated));
  messagesOf('getTask', uiArtifact('getTask', again));
  ok('activated getTask: the same DataPart');

  const streamed = [];
  for await (const sr of client.sendMessageStream(request(`js-${version}-${++n}`, [{ text: 'show me the A2UI demo' }]), activated)) {
    const j = StreamResponse.toJSON(sr);
    if (j.artifactUpdate) streamed.push(j.artifactUpdate.artifact);
  }
  messagesOf('stream', uiArtifact('stream', { artifacts: streamed }));
  ok('activated stream: the DataPart in an artifact update');

  const plain = completed('not activated', Task.toJSON(await ask(undefined)));
  if (seen.sent?.['A2A-Extensions'] || seen.sent?.['X-A2A-Extensions'] || seen.answered) fail(`not activated: headers ${str(seen)}`);
  const text = uiArtifact('not activated', plain);
  if (text.parts.length !== 1 || !text.parts[0].text?.startsWith('[surface wunder_demo]') || !text.parts[0].text.includes('A2UI in wunder')) {
    fail(`not activated: ${str(text)}`);
  }
  ok('not activated: the text fallback');

  // 3. The user's action, as a DataPart in the other MIME spelling, on the
  // form's context: the demo model answers quoting what it read.
  const action = { name: 'wunder_demo_send', surfaceId: 'wunder_demo', sourceComponentId: 'send', timestamp: '2026-12-08T10:00:00Z', context: { name: 'Ada', docs: true } };
  const part = version === '1.0'
    ? { data: [{ version: 'v0.9', action }], mediaType: 'application/a2ui+json' }
    : { data: { version: 'v0.9', action }, metadata: { mimeType: 'application/a2ui+json' } };
  const answered = completed('action', Task.toJSON(await client.sendMessage(
    request(`js-${version}-${++n}`, [part], { contextId: form.contextId }), activated)));
  const said = [...(answered.artifacts ?? []).flatMap((a) => a.parts), ...(answered.status?.message?.parts ?? [])]
    .map((p) => p.text ?? '').join('\n');
  const quoted = '[a2ui action] {"context":{"docs":true,"name":"Ada"},"name":"wunder_demo_send","sourceComponentId":"send","surfaceId":"wunder_demo","timestamp":"2026-12-08T10:00:00Z"}';
  if (!said.includes(`Your button press reached me as this message: ${quoted}`)) fail(`the action: ${str(answered)}`);
  const update = uiArtifact('action', answered);
  if (!str(update.parts).includes('updateDataModel')) fail(`the action's surface update: ${str(update)}`);
  ok('the action reached the model, which quoted it and updated the surface');
}
console.log('DONE');
