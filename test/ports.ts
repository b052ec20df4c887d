// A loopback port for a server a test starts in another process, found free now.
//
// Chosen below the system's ephemeral range, not by binding port 0: a port handed out by the system
// is one every outgoing connection on the machine may take next (eight test processes open thousands),
// so between finding it free and the server binding it, a client could hold it and the server fail to
// start. Below the range only servers that ask for a port by number take one.
import { readFileSync } from "node:fs";

function ephemeralFloor(): number {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

const FLOOR = 10_000;

export function freePort(): number {
  const top = ephemeralFloor();
  for (let tries = 0; top - FLOOR > 1000 && tries < 200; tries++) {
    const port = FLOOR + Math.floor(Math.random() * (top - FLOOR));
    try {
      Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } }).stop(true);
      return port;
    } catch {
      // Taken: another.
    }
  }
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}
