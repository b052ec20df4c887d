// File names in a person's export, made from titles they chose: the same rule
// for every service, so a title with a slash or a colon still makes one file
// that opens on any system.

/** A title as a file name: no folder separators or characters a file system refuses, not hidden, not too long. */
export function fileName(title: string, ext = ""): string {
  const base = title.replace(/[\/\\:*?"<>|\u0000-\u001f\u007f]+/g, "-").replace(/^[.\s]+|[.\s]+$/g, "").slice(0, 120) || "untitled";
  return base + ext;
}
