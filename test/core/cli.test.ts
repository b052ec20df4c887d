// one store: the commands spawn hearth, which ignores the pass's settings; the binary, on PostgreSQL too, runs in cli-binary.test.ts
// The CLI run from source as a person would: real processes, real ports. The single binary is cli-binary.test.ts's
// (a file of its own, so the build and its checks run beside these rather than after them).
import { bookmarksTest, main, suite } from "./cli.ts";

suite("hearth from source", () => ["bun", main]);

bookmarksTest("from source", () => ["bun", main]);
