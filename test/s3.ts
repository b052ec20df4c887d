// An S3-compatible server on loopback (s3rver, from the npm registry, keeping
// its objects in a temp folder), so the S3 blob store runs its real client
// and SigV4 requests offline.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";

/** Starts the server with these buckets; `env(bucket)` is the settings that point Hearth at one. */
export async function startS3(buckets = ["hearth"]) {
  const dir = mkdtempSync(join(tmpdir(), "hearth-s3-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: dir, configureBuckets: buckets.map((name) => ({ name, configs: [] })) });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  // s3rver's fixed credentials.
  const env = (bucket = buckets[0]) => ({ HEARTH_BLOBS: "s3", HEARTH_S3_ENDPOINT: endpoint, HEARTH_S3_BUCKET: bucket, HEARTH_S3_ACCESS_KEY_ID: "S3RVER", HEARTH_S3_SECRET_ACCESS_KEY: "S3RVER", HEARTH_S3_REGION: "us-east-1" });
  /** A client of its own, to see what a bucket holds apart from Hearth. */
  const client = (bucket = buckets[0]) => new Bun.S3Client({ endpoint, bucket, accessKeyId: "S3RVER", secretAccessKey: "S3RVER", region: "us-east-1" });
  return {
    endpoint,
    env,
    client,
    /** Keys in a bucket. */
    async keys(bucket = buckets[0]): Promise<string[]> {
      return ((await client(bucket).list()).contents ?? []).map((o) => o.key).sort();
    },
    async stop() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
