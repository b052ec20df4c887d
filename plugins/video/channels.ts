// The curated channels: plugins/video/channels.json unless VIDEO_CHANNELS_FILE names
// another file of the same shape. A bad file stops the start with what is wrong.
import { settingJson } from "hearth";
// Imported, not read from disk, so a compiled binary carries the default list.
import defaults from "./channels.json";

export interface Channel {
  id: string;
  name: string;
  topic: string | null;
}

const cache = new Map<string, Channel[]>();

export function curatedChannels(config: Readonly<Record<string, string>>): Channel[] {
  const { file, data } = settingJson(config.VIDEO_CHANNELS_FILE, { name: "plugins/video/channels.json", data: defaults }, "video channels");
  const held = cache.get(file);
  if (held) return held;
  const parsed = data as any;
  if (!parsed || !Array.isArray(parsed.channels)) throw new Error(`video channels ${file}: needs {"channels": [{"id", "name"}, ...]}`);
  const out: Channel[] = [];
  parsed.channels.forEach((c: any, i: number) => {
    if (!c || typeof c.id !== "string" || !/^UC[\w-]{22}$/.test(c.id)) throw new Error(`video channels ${file}: channels[${i}].id must be a YouTube channel id (UC followed by 22 characters)`);
    if (out.some((o) => o.id === c.id)) return;
    out.push({ id: c.id, name: typeof c.name === "string" && c.name.trim() ? c.name.trim() : c.id, topic: typeof c.topic === "string" ? c.topic : null });
  });
  cache.set(file, out);
  return out;
}
