// Image generation in the OpenAI wire format (POST /images/generations).
// GPT image models always answer base64; DALL·E answers a URL unless asked
// for base64, so it is asked; a server that still sends a URL is fetched.
import { upstream } from "../errors.ts";
import { errorWords, postJson, Transient, type Endpoint, type PostOptions } from "./wire.ts";

export interface ImageRequest {
  prompt: string;
  /** WIDTHxHEIGHT; default AI_IMAGE_SIZE. */
  size?: string;
  signal?: AbortSignal;
}

export interface GeneratedImage {
  bytes: Uint8Array;
  /** Content type read from the bytes: image/png, image/jpeg, image/webp or image/gif. */
  type: string;
  /** File extension that goes with type, without the dot. */
  ext: string;
  /** The prompt as the model rewrote it (DALL·E 3), when it says. */
  revised_prompt?: string;
  model: string;
  usage: { prompt_tokens: number | null; completion_tokens: number | null; total_tokens: number | null };
}

const MAX_BYTES = 20_000_000;

export function sniff(bytes: Uint8Array): { type: string; ext: string } | null {
  const b = bytes;
  if (b.length > 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return { type: "image/png", ext: "png" };
  if (b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return { type: "image/jpeg", ext: "jpg" };
  if (b.length > 12 && String.fromCharCode(...b.subarray(0, 4)) === "RIFF" && String.fromCharCode(...b.subarray(8, 12)) === "WEBP") return { type: "image/webp", ext: "webp" };
  if (b.length > 6 && String.fromCharCode(...b.subarray(0, 4)) === "GIF8") return { type: "image/gif", ext: "gif" };
  return null;
}

export async function generateImage(ep: Endpoint, model: string, req: ImageRequest & { size: string }, opts: PostOptions): Promise<GeneratedImage> {
  const body: Record<string, unknown> = { model, prompt: req.prompt, n: 1, size: req.size };
  if (/^dall-e/i.test(model)) body.response_format = "b64_json";
  const answer = await postJson(ep, "/images/generations", body, model, opts);
  if (answer?.error) throw upstream("upstream_failed", `the image provider at ${ep.label} answered with an error: ${errorWords(ep, answer.error)}`);
  const first = Array.isArray(answer?.data) ? answer.data[0] : undefined;
  if (!first || (typeof first.b64_json !== "string" && typeof first.url !== "string"))
    throw new Transient(upstream("upstream_failed", `the image provider at ${ep.label} sent an answer without data[0].b64_json or data[0].url`));
  let bytes: Uint8Array;
  if (typeof first.b64_json === "string") {
    bytes = new Uint8Array(Buffer.from(first.b64_json, "base64"));
  } else {
    bytes = await download(ep, first.url, opts);
  }
  const kind = sniff(bytes);
  if (!kind) throw new Transient(upstream("upstream_failed", `the image provider at ${ep.label} sent bytes that are not a PNG, JPEG, WebP or GIF image`));
  const u = answer.usage;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
  return {
    bytes,
    ...kind,
    revised_prompt: typeof first.revised_prompt === "string" ? first.revised_prompt : undefined,
    model,
    // Image models report input and output tokens under those names.
    usage: { prompt_tokens: n(u?.input_tokens ?? u?.prompt_tokens), completion_tokens: n(u?.output_tokens ?? u?.completion_tokens), total_tokens: n(u?.total_tokens) },
  };
}

async function download(ep: Endpoint, url: string, opts: PostOptions): Promise<Uint8Array> {
  if (!/^https?:\/\//.test(url)) throw upstream("upstream_failed", `the image provider at ${ep.label} sent an image address that is not http(s)`);
  const abort = new AbortController();
  const t = setTimeout(() => abort.abort(), opts.timeoutMs);
  try {
    const res = await fetch(url, { signal: abort.signal });
    if (!res.ok) throw new Transient(upstream("upstream_failed", `the image at the address the provider at ${ep.label} sent answered HTTP ${res.status}`));
    const text = await res.arrayBuffer().catch(() => {
      throw new Transient(upstream("upstream_failed", `the image at the address the provider at ${ep.label} sent broke off`));
    });
    if (text.byteLength > MAX_BYTES) throw upstream("upstream_failed", `the image the provider at ${ep.label} sent is larger than ${MAX_BYTES / 1e6} MB`);
    return new Uint8Array(text);
  } catch (e) {
    if (e instanceof Transient || (e as { kind?: string }).kind) throw e;
    throw new Transient(upstream("upstream_unavailable", `the image at the address the provider at ${ep.label} sent could not be fetched`));
  } finally {
    clearTimeout(t);
  }
}
