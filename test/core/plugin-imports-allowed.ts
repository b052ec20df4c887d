// Files under plugins/ still importing past the SDK, and what each imports
// (from the project's root). Only shrinks: plugin-imports.test.ts fails on an
// import not listed here and on a listed one that is gone.
export const allowed: Record<string, string[]> = {
  "plugins/agent/host.ts": ["core/auth/sessions.ts", "core/call.ts", "core/db/schema.ts", "core/dispatch.ts", "core/mail/index.ts", "core/registry.ts", "core/runtime.ts", "plugins/recall/store.ts"],
  "plugins/agent/page.ts": ["plugins/recall/schema.ts", "plugins/recall/store.ts"],
  "plugins/agent/run.ts": ["plugins/recall/store.ts"],
  "plugins/apps/mcp.ts": ["core/mcp/apps.ts", "core/mcp/tools.ts", "core/mcp/views.ts", "core/runtime.ts"],
  "plugins/mail/index.ts": ["core/mail/messages.ts"],
};
