// Core modules that register capabilities, identifiers, HTTP mounts or CLI
// commands when imported. The runtime imports this file once; each module
// adds one line here.
export {};
import "./mcp/index.ts";
import "./upstream/index.ts";
import "./upstream/bytes.ts";
import "./auth/module.ts";
import "./scheduler/index.ts";
import "./pay/index.ts";
import "./http/pages/front.ts";
import "./ai/index.ts";
import "./mail/index.ts";
import "./methods.ts";
import "./backup/cli.ts";
import "./cli/plugin.ts";
import "./dav/server.ts";
