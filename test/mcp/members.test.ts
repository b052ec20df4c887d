// The hot path's check that a message holds only the members it expects
// (core/mcp/rpc.ts): it must refuse whatever a walk over the keys refused,
// since a refusal is what sends a message on to the SDK.
import { expect, test } from "bun:test";
import { membersWithin } from "../../core/mcp/rpc.ts";

const ENVELOPE = ["jsonrpc", "id", "method", "params"];

test("an object whose keys are all named is within; any key more, or one held as undefined, is not", () => {
  expect(membersWithin(JSON.parse('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}'), ENVELOPE)).toBe(true);
  expect(membersWithin(JSON.parse('{"jsonrpc":"2.0","id":1,"method":"tools/call"}'), ENVELOPE)).toBe(true);
  expect(membersWithin({}, ENVELOPE)).toBe(true);
  expect(membersWithin(JSON.parse('{"jsonrpc":"2.0","id":1,"method":"tools/call","extra":true}'), ENVELOPE)).toBe(false);
  expect(membersWithin(JSON.parse('{"jsonrpc":"2.0","id":null,"method":"x"}'), ENVELOPE)).toBe(true);
  expect(membersWithin({ jsonrpc: "2.0", id: undefined }, ENVELOPE)).toBe(false);
  // A "__proto__" member in JSON is an own key like any other, and not one of the names.
  expect(membersWithin(JSON.parse('{"jsonrpc":"2.0","__proto__":{"id":1}}'), ENVELOPE)).toBe(false);
  // Names the prototype holds do not count as the object's own.
  const inherited = Object.create({ id: 1 }) as Record<string, unknown>;
  inherited.other = 1;
  expect(membersWithin(inherited, ENVELOPE)).toBe(false);
});
