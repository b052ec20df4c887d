// Rebuilds TestUSDC.json from TestUSDC.sol with solc from npm:
// `bun test/pay/chain/compile.ts`. Tests load the JSON so they need no compiler run.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import solc from "solc";

const source = readFileSync(join(import.meta.dir, "TestUSDC.sol"), "utf8");
const input = {
  language: "Solidity",
  sources: { "TestUSDC.sol": { content: source } },
  settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: "paris", outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } },
};
const out = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === "error");
if (errors.length) throw new Error(errors.map((e: { formattedMessage: string }) => e.formattedMessage).join("\n"));
const c = out.contracts["TestUSDC.sol"].TestUSDC;
writeFileSync(
  join(import.meta.dir, "TestUSDC.json"),
  JSON.stringify({ compiler: `solc ${solc.version()}`, abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` }, null, 1) + "\n",
);
console.log("wrote TestUSDC.json");
