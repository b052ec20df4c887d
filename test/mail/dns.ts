// A DNS server on loopback answering from a zone the test writes (TXT, MX, A),
// so MX lookups and SPF/DKIM/DMARC checks run their real resolver code offline.
import * as packet from "dns-packet";

/** A name's records, or `rcode` for a server that answers it with an error (2: SERVFAIL, 5: REFUSED). */
export type Zone = Map<string, { TXT?: string[]; MX?: { preference: number; exchange: string }[]; A?: string[]; rcode?: number }>;

export async function startDns(zone: Zone = new Map()) {
  const sock = await Bun.udpSocket({
    hostname: "127.0.0.1",
    socket: {
      data(s, buf, port, addr) {
        const q = packet.decode(Buffer.from(buf));
        const question = q.questions?.[0];
        if (!question) return;
        const name = question.name.toLowerCase().replace(/\.$/, "");
        const node = zone.get(name);
        const answers: packet.Answer[] = [];
        if (node && question.type === "TXT") for (const t of node.TXT ?? []) answers.push({ type: "TXT", name: question.name, ttl: 60, data: chunks(t) });
        if (node && question.type === "MX") for (const m of node.MX ?? []) answers.push({ type: "MX", name: question.name, ttl: 60, data: m });
        if (node && question.type === "A") for (const a of node.A ?? []) answers.push({ type: "A", name: question.name, ttl: 60, data: a });
        // NXDOMAIN for a name the zone does not hold, NOERROR with no answers for a missing type.
        const rcode = node ? (node.rcode ?? 0) : 3;
        s.send(packet.encode({ id: q.id, type: "response", flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | rcode, questions: q.questions, answers }), port, addr);
      },
    },
  });
  return {
    zone,
    server: `127.0.0.1:${sock.port}`,
    stop: () => sock.close(),
  };
}

/** TXT values longer than 255 bytes travel as several strings, as publishing them requires. */
function chunks(s: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += 255) out.push(s.slice(i, i + 255));
  return out;
}
