// An @a2a-js/sdk 1.3.0 echo agent for wunder's a2a@service tests
// (adapters/a2atools): answers "echo: <text>" as a task with an artifact,
// over JSON-RPC 1.0 and (legacyCompat) 0.3. Prints "LISTENING <port>".
import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { jsonRpcHandler, agentCardHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { AgentCard, Task, TaskStatusUpdateEvent, TaskArtifactUpdateEvent } from '@a2a-js/sdk';

const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const port = server.address().port;
  const url = `http://127.0.0.1:${port}/rpc`;
  const card = AgentCard.fromJSON({
    name: 'js-echo', description: 'echoes', version: '1',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [],
  });
  const executor = {
    async execute(ctx, bus) {
      const text = ctx.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      const info = { taskId: ctx.taskId, contextId: ctx.contextId };
      if (!ctx.task) {
        bus.publish({ kind: 'task', data: Task.fromJSON({ id: ctx.taskId, contextId: ctx.contextId, status: { state: 'TASK_STATE_SUBMITTED' }, history: [] }) });
      }
      bus.publish({ kind: 'artifactUpdate', data: TaskArtifactUpdateEvent.fromJSON({ ...info, artifact: { artifactId: 'a1', parts: [{ text: `echo: ${text}` }] }, lastChunk: true }) });
      bus.publish({ kind: 'statusUpdate', data: TaskStatusUpdateEvent.fromJSON({ ...info, status: { state: 'TASK_STATE_COMPLETED' } }) });
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      bus.publish({ kind: 'statusUpdate', data: TaskStatusUpdateEvent.fromJSON({ taskId, contextId: '', status: { state: 'TASK_STATE_CANCELED' } }) });
      bus.finished();
    },
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const compat = { legacyCompat: { enabled: true } };
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: () => Promise.resolve(card), ...compat }));
  app.use('/rpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, ...compat }));
  console.log(`LISTENING ${port}`);
});
process.stdin.on('end', () => process.exit(0)); // the Go test closes stdin to stop us
process.stdin.resume();
