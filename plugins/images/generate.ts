// generate: the image model draws, and the picture is kept as the caller's
// file (files/put), so its URL lasts and it shows up among their files.
import type { Ctx } from "hearth";

/** A file name from the prompt: "A red fox, in snow!" -> "a-red-fox-in-snow.png". */
export function fileNameFor(prompt: string, ext: string): string {
  const words = prompt
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
  return `${words || "image"}.${ext}`;
}

interface StoredFile {
  id: string;
  name: string;
  type: string;
  size: number;
  url: string;
}

export async function generate(ctx: Ctx, prompt: string) {
  const img = await ctx.ai.image({ prompt });
  const file = (await ctx.call("files", "put", {
    name: fileNameFor(prompt, img.ext),
    content: Buffer.from(img.bytes).toString("base64"),
    encoding: "base64",
    type: img.type,
  })) as StoredFile;
  // A nested call does not carry the address the caller reached us at, so a relative URL is completed here.
  const url = /^https?:\/\//.test(file.url) ? file.url : `${ctx.baseUrl}${file.url}`;
  return {
    url,
    file: file.id,
    name: file.name,
    type: file.type,
    size: file.size,
    prompt,
    ...(img.revised_prompt ? { revised_prompt: img.revised_prompt } : {}),
    model: img.model,
  };
}
