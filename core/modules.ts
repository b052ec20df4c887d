// The core modules an instance is wired with, in order: identifiers are tried,
// and migrations applied, in this order. Each module declares what it provides
// and requires (core/module.ts); importing one registers nothing.
import { agentHostModule } from "./agent/host.ts";
import { aiModule } from "./ai/index.ts";
import { auditModule } from "./audit/index.ts";
import { authModule } from "./auth/module.ts";
import { oauthModule } from "./auth/oauth/index.ts";
import { backupModule } from "./backup/cli.ts";
import { exportModule } from "./export/index.ts";
import { storeModule } from "./capabilities.ts";
import { pluginToolsModule } from "./cli/plugin.ts";
import { davModule } from "./dav/server.ts";
import { frontModule } from "./http/pages/front.ts";
import { sandboxModule } from "./http/sandbox.ts";
import { mailModule } from "./mail/index.ts";
import { mcpModule } from "./mcp/index.ts";
import { methodsModule } from "./methods.ts";
import type { CoreModule } from "./module.ts";
import { payModule } from "./pay/index.ts";
import { policyModule } from "./policy/index.ts";
import { schedulerModule } from "./scheduler/index.ts";
import { settingsModule } from "./settings/module.ts";
import { sharedModule } from "./shared/module.ts";
import { bytesModule } from "./upstream/bytes.ts";
import { upstreamModule } from "./upstream/index.ts";
import { viewsModule } from "./views/module.ts";

export const coreModules: readonly CoreModule[] = [
  storeModule,
  sharedModule,
  mcpModule,
  upstreamModule,
  bytesModule,
  authModule,
  oauthModule,
  schedulerModule,
  payModule,
  frontModule,
  sandboxModule,
  viewsModule,
  aiModule,
  mailModule,
  methodsModule,
  agentHostModule,
  backupModule,
  exportModule,
  pluginToolsModule,
  davModule,
  auditModule,
  policyModule,
  settingsModule,
];
