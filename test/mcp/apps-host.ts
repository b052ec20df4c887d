// The smallest MCP Apps host, bundled for the browser by test/mcp/apps-browser.test.ts:
// ext-apps' own AppBridge on one sandboxed iframe. The view's tools/call go to
// `hostCallTool`, which the test wires to its MCP client of the instance, as
// a real host forwards them over its own connection.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

type Params = Parameters<NonNullable<AppBridge["oncalltool"]>>[0];
type Result = Awaited<ReturnType<NonNullable<AppBridge["oncalltool"]>>>;

interface Host {
  hostCallTool(params: Params): Promise<Result>;
  openView(html: string): Promise<void>;
  showResult(args: Record<string, unknown>, result: Parameters<AppBridge["sendToolResult"]>[0]): Promise<void>;
  /** The tools views called, each once its answer is back. */
  toolCalls: string[];
}
const host = window as unknown as Window & Host;
let bridge: AppBridge | null = null;
host.toolCalls = [];

host.openView = async (html) => {
  const frame = document.getElementById("view") as HTMLIFrameElement;
  bridge = new AppBridge(null, { name: "Hearth test host", version: "1.0.0" }, { serverTools: {} });
  bridge.oncalltool = async (params) => {
    const result = await host.hostCallTool(params);
    host.toolCalls.push(params.name);
    return result;
  };
  const initialized = new Promise<void>((resolve) => {
    bridge!.oninitialized = () => resolve();
  });
  await bridge.connect(new PostMessageTransport(frame.contentWindow!, frame.contentWindow!));
  frame.srcdoc = html;
  await initialized;
};

host.showResult = async (args, result) => {
  await bridge!.sendToolInput({ arguments: args });
  await bridge!.sendToolResult(result);
};
