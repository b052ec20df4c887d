// How many SMS a text travels as (3GPP TS 23.038 / 23.040). A text wholly in
// the GSM 7-bit alphabet fits 160 septets in one SMS and 153 per part when
// split (the header takes the rest); the extension characters take two
// septets. Anything else goes as UCS-2: 70 UTF-16 units alone, 67 per part.

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

export function segmentsOf(text: string): Segments {
  let septets = 0;
  for (const ch of text) {
    if (basic.has(ch)) septets += 1;
    else if (extension.has(ch)) septets += 2;
    else {
      const units = text.length;
      return { encoding: "UCS-2", units, segments: units <= 70 ? 1 : Math.ceil(units / 67) };
    }
  }
  return { encoding: "GSM-7", units: septets, segments: septets <= 160 ? 1 : Math.ceil(septets / 153) };
}
