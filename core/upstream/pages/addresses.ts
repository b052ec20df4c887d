// Which addresses a fetch on a caller's behalf may reach. Anything that is
// not plainly on the public internet is refused: a page on the instance's own
// network, the instance itself, or a cloud metadata service must never be
// reachable by asking this server to fetch a URL.
import { isIP } from "node:net";

export type Blocked = "loopback" | "private" | "link-local" | "metadata" | "unspecified" | "reserved" | "multicast" | "shared";

interface Range {
  base: bigint;
  bits: number;
  width: 32 | 128;
  why: Blocked;
}

function v4(text: string): bigint | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let n = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    n = (n << 8n) | BigInt(Number(p));
  }
  return n;
}

function v6(text: string): bigint | null {
  let s = text.toLowerCase();
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hextets.
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const n = v4(tail[1]);
    if (n === null) return null;
    s = s.slice(0, -tail[1].length) + ((n >> 16n) & 0xffffn).toString(16) + ":" + (n & 0xffffn).toString(16);
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  let n = 0n;
  for (const g of groups) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
    n = (n << 16n) | BigInt(parseInt(g, 16));
  }
  return n;
}

const range4 = (cidr: string, why: Blocked): Range => {
  const [ip, bits] = cidr.split("/");
  return { base: v4(ip)!, bits: Number(bits), width: 32, why };
};
const range6 = (cidr: string, why: Blocked): Range => {
  const [ip, bits] = cidr.split("/");
  return { base: v6(ip)!, bits: Number(bits), width: 128, why };
};

// Metadata endpoints first, so they are named as such rather than as the wider range they sit in.
const V4: Range[] = [
  range4("169.254.169.254/32", "metadata"), // AWS, GCP, Azure, OpenStack, DigitalOcean
  range4("169.254.170.2/32", "metadata"), // AWS ECS task credentials
  range4("168.63.129.16/32", "metadata"), // Azure wire server (a public address)
  range4("100.100.100.200/32", "metadata"), // Alibaba Cloud
  range4("0.0.0.0/8", "unspecified"),
  range4("10.0.0.0/8", "private"),
  range4("100.64.0.0/10", "shared"),
  range4("127.0.0.0/8", "loopback"),
  range4("169.254.0.0/16", "link-local"),
  range4("172.16.0.0/12", "private"),
  range4("192.0.0.0/24", "reserved"),
  range4("192.0.2.0/24", "reserved"),
  range4("192.88.99.0/24", "reserved"),
  range4("192.168.0.0/16", "private"),
  range4("198.18.0.0/15", "reserved"),
  range4("198.51.100.0/24", "reserved"),
  range4("203.0.113.0/24", "reserved"),
  range4("224.0.0.0/4", "multicast"),
  range4("240.0.0.0/4", "reserved"),
];

const V6: Range[] = [
  range6("fd00:ec2::254/128", "metadata"), // AWS over IPv6
  range6("::/128", "unspecified"),
  range6("::1/128", "loopback"),
  range6("fe80::/10", "link-local"),
  range6("fec0::/10", "private"),
  range6("fc00::/7", "private"),
  range6("ff00::/8", "multicast"),
  range6("2001:db8::/32", "reserved"),
  range6("100::/64", "reserved"),
  // The NAT64 local-use prefix: the operator's own translator decides where it leads (any IPv4, private ones included).
  range6("64:ff9b:1::/48", "private"),
];

const inRange = (n: bigint, r: Range) => n >> BigInt(r.width - r.bits) === r.base >> BigInt(r.width - r.bits);

/** Why an IP address may not be fetched, or null when it is a public address. */
export function blockedAddress(ip: string): Blocked | null {
  const family = isIP(ip);
  if (family === 4) {
    const n = v4(ip);
    if (n === null) return "reserved";
    return V4.find((r) => inRange(n, r))?.why ?? null;
  }
  if (family === 6) {
    const n = v6(ip);
    if (n === null) return "reserved";
    const hit = V6.find((r) => inRange(n, r));
    if (hit) return hit.why;
    // IPv4 carried inside IPv6 (mapped, compatible, NAT64, 6to4) is judged as the IPv4 address it reaches.
    const embedded =
      n >> 32n === 0xffffn || n >> 32n === 0n || n >> 32n === 0x64ff9b0000000000000000n
        ? n & 0xffffffffn
        : n >> 112n === 0x2002n
          ? (n >> 80n) & 0xffffffffn
          : null;
    if (embedded !== null) {
      const text = [24n, 16n, 8n, 0n].map((s) => String((embedded >> s) & 0xffn)).join(".");
      return blockedAddress(text);
    }
    return null;
  }
  return "reserved";
}

/** Host names that lead to the instance or a metadata service whatever DNS says. */
export function blockedName(host: string): Blocked | null {
  const h = host.toLowerCase().replace(/\.$/, "");
  if (h === "localhost" || h.endsWith(".localhost")) return "loopback";
  if (h === "metadata" || h === "metadata.google.internal" || h.endsWith(".metadata.google.internal") || h === "instance-data" || h === "instance-data.ec2.internal") return "metadata";
  return null;
}

export const describeBlocked: Record<Blocked, string> = {
  loopback: "a loopback address (this machine)",
  private: "a private network address",
  "link-local": "a link-local address",
  metadata: "a cloud metadata service",
  unspecified: "an unspecified address",
  reserved: "a reserved address",
  multicast: "a multicast address",
  shared: "a carrier-grade NAT address",
};
