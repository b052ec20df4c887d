// ctx.broadcast: messages a plugin sends to itself on every instance of the
// deployment (a chat message posted on one reaches listeners connected to
// another). Topics are the plugin's own: two plugins never hear each other.
import { defineModule } from "../module.ts";

export interface Broadcast {
  /** Sends message to every instance's subscribers of topic, this one's included. */
  publish(topic: string, message: string): void;
  /** fn hears each message on topic from now on; the returned function stops it. */
  subscribe(topic: string, fn: (message: string) => void): () => void;
}

declare module "../plugin.ts" {
  interface CapabilityTypes {
    broadcast: Broadcast;
  }
}

export const sharedModule = defineModule({
  name: "shared",
  provides: {
    capabilities: {
      broadcast: (s): Broadcast => ({
        publish: (topic, message) => s.rt.shared.publish(`${s.service}:${topic}`, message),
        subscribe: (topic, fn) => s.rt.shared.subscribe(`${s.service}:${topic}`, fn),
      }),
    },
  },
});
