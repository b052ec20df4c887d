// How many SMS a text travels as (3GPP TS 23.038 / 23.040), which is what
// Twilio bills. A text wholly in the GSM 7-bit alphabet fits 160 septets in
// one SMS and 153 per part when split (the header takes the rest); the
// extension characters take two septets. Anything else goes as UCS-2: 70
// UTF-16 units alone, 67 per part. A part never ends between the two halves
// of an extension character or of a surrogate pair (an emoji): the whole
// character moves to the next part, so a part may hold one unit less.

const GSM_BASIC =
  "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
const GSM_EXTENSION = "^{}\\[~]|€\f";

const basic = new Set(GSM_BASIC);
const extension = new Set(GSM_EXTENSION);

export interface Segments {
  encoding: "GSM-7" | "UCS-2";
  /** Septets for GSM-7, UTF-16 units for UCS-2. */
  units: number;
  segments: number;
}

/** Parts of `perPart` units that characters of the given sizes fill, none split across two. */
function parts(sizes: number[], total: number, single: number, perPart: number): number {
  if (total <= single) return 1;
  let n = 1;
  let used = 0;
  for (const size of sizes) {
    if (used + size > perPart) {
      n++;
      used = 0;
    }
    used += size;
  }
  return n;
}

export function segmentsOf(text: string): Segments {
  const septets: number[] = [];
  let gsm = true;
  for (const ch of text) {
    if (basic.has(ch)) septets.push(1);
    else if (extension.has(ch)) septets.push(2);
    else {
      gsm = false;
      break;
    }
  }
  if (gsm) {
    const units = septets.reduce((a, b) => a + b, 0);
    return { encoding: "GSM-7", units, segments: parts(septets, units, 160, 153) };
  }
  const sizes = Array.from(text, (ch) => ch.length);
  return { encoding: "UCS-2", units: text.length, segments: parts(sizes, text.length, 70, 67) };
}
