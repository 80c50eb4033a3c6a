// An MCP client of the official TypeScript SDK that declares elicitation:
// it calls one tool over streamable HTTP, answers every elicitation/create
// with the next of the given results, and prints the requests it got and
// the tool's result as one JSON object.
//
//   node elicit_client.mjs URL TOOL ARGUMENTS_JSON ANSWERS_JSON
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, tool, args, answers] = process.argv.slice(2);
const queue = JSON.parse(answers);
const asked = [];
const client = new Client({ name: "ts-elicit", version: "1" }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push(req.params);
  return queue.shift() ?? { action: "cancel" };
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
console.log(JSON.stringify({ asked, result }));
await client.close();
