// `hearth/mail`: the instance's addresses (user, user+tag, user@domain), for
// a plugin reading or answering mail sent to them.
export { TAG, addressOf, parseLocal, sameDomain, splitAddress } from "../mail/addresses.ts";
export type { ArrivedMail, SendInput } from "../mail/index.ts";
