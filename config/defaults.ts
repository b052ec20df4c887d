// Every setting the core reads, with its default and what it does.
// The settings file (config/hearth.env, or HEARTH_CONFIG) overrides these and
// environment variables override the file; plugins declare their own in their
// manifest (`config`), and config/example.env documents them all.
export interface Setting {
  default: string;
  description: string;
}

export const coreSettings: Record<string, Setting> = {
  PORT: { default: "8080", description: "TCP port the server listens on." },
  HOST: { default: "0.0.0.0", description: "Address the server binds to." },
  HEARTH_SANDBOX_PORT: {
    default: "",
    description:
      "A second port, on HOST, serving only documents someone else wrote (hosted app pages, published snippets), so each runs in an origin of its own: the instance's pages frame it from the same host name on this port, no cookie or token counts there, and a document can neither reach the instance nor make the browser look up or connect to a host it names. Empty: PORT+1 (left unused, with a warning, when taken). off: none; such documents then run on the instance's own origin in an opaque sandbox. Behind a proxy (HEARTH_PUBLIC_URL set) the port is used only when set here, and must then be reachable at the public name on this same port; otherwise give the plugins serving them a host name of their own (/status and hearth help name the setting).",
  },
  HEARTH_CONFIG: { default: "", description: "Settings file read at start by the server and every command (the environment wins over it); empty: config/hearth.env in Hearth's folder (the checkout, or the folder holding the binary). Set it in the environment." },
  HEARTH_DATA: { default: "./data", description: "Folder holding the database and blobs, created when first needed; a relative path is taken from Hearth's folder (the checkout, or the folder holding the binary), so the server and the CLI use the same one wherever they are started." },
  HEARTH_DATABASE_URL: { default: "", description: "Empty: the database is embedded SQLite in the data folder. A postgres://user:password@host:port/database URL: the tables live in that PostgreSQL database instead, so several instances can share it (migrated once at start, under an advisory lock). The database must sort text in byte order, as SQLite does: CREATE DATABASE hearth TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'." },
  HEARTH_DATABASE_POOL: { default: "10", description: "With HEARTH_DATABASE_URL: the most connections this instance opens to PostgreSQL (up to half of them hold writes in progress, which run side by side; the rest serve reads); shared state kept in the database (HEARTH_SHARED) opens two more of its own. Instances sharing a database together stay under its max_connections." },
  HEARTH_BLOBS: { default: "disk", description: "Where file and mail bytes are kept: disk (blobs/ in the data folder) or s3 (an S3-compatible bucket, set with the HEARTH_S3_ settings; several instances behind one proxy share it). A setting s3 needs and lacks answers 501 naming it." },
  HEARTH_S3_ENDPOINT: { default: "", description: "With HEARTH_BLOBS=s3: the bucket's service URL (https://s3.eu-west-2.amazonaws.com, http://127.0.0.1:9000 for MinIO)." },
  HEARTH_S3_BUCKET: { default: "", description: "With HEARTH_BLOBS=s3: the bucket holding the blobs; it must exist." },
  HEARTH_S3_REGION: { default: "", description: "With HEARTH_BLOBS=s3: the bucket's region; empty lets the client choose (us-east-1 or the endpoint's)." },
  HEARTH_S3_ACCESS_KEY_ID: { default: "", description: "With HEARTH_BLOBS=s3: the access key allowed to read, write, list and delete in the bucket." },
  HEARTH_S3_SECRET_ACCESS_KEY: { default: "", description: "With HEARTH_BLOBS=s3: that access key's secret." },
  HEARTH_S3_PREFIX: { default: "", description: "With HEARTH_BLOBS=s3: a key prefix (\"hearth/\") when the bucket is shared with other things." },
  HEARTH_S3_REDIRECT: { default: "off", description: "With HEARTH_BLOBS=s3: on answers a file download with a redirect to a signed URL of the bucket that works for 60 seconds, so the bytes do not pass through the instance (the bucket must be reachable by the readers); off streams them through the instance, which keeps ranges, ETags and the sandboxing headers its own." },
  HEARTH_PLUGINS: { default: "", description: "Colon-separated folders of drop-in plugins, loaded at start." },
  HEARTH_PUBLIC_URL: { default: "", description: "Public base URL for links in answers; taken from each request when empty." },
  HEARTH_ALLOWED_HOSTS: { default: "", description: "Comma-separated host names the server answers to besides HEARTH_PUBLIC_URL's, localhost and IP addresses (a name a proxy passes on, say); others get 403 when this, HEARTH_PUBLIC_URL or a loopback HOST is set, against DNS rebinding. * answers any name." },
  HEARTH_TZ: { default: "", description: "IANA time zone of the people this instance serves (Europe/London); empty: the TZ variable when it names one. A repeating event given in this zone's offset keeps its local time across daylight-saving changes; other offsets stay fixed." },
  HEARTH_REDIS_URL: { default: "", description: "A Redis server (redis://host:6379, rediss:// for TLS) that several instances behind one load balancer share: rate limits, credits held for running calls, token revocations and chat messages then reach every instance. Empty keeps them in the PostgreSQL database with HEARTH_DATABASE_URL (see HEARTH_SHARED), else in this instance's memory, for one instance. If Redis goes away an instance keeps serving from its own memory and checks every token against the database until it is back." },
  HEARTH_SHARED: { default: "database", description: "With HEARTH_DATABASE_URL and no HEARTH_REDIS_URL: where rate limits, sign-in failures, credits held for running calls, token revocations and chat messages are kept. database: in the PostgreSQL database (scratch tables and LISTEN/NOTIFY), so every instance sharing it agrees; while it is unreachable an instance serves from its own memory and checks every token against the database. memory: in this instance's own, which saves a database round trip on every call (a few hundred microseconds), for an instance alone on its database." },
  HEARTH_SCHEDULE_LEASE_SECONDS: { default: "120", description: "Seconds a scheduled firing stays claimed by the instance running it without that instance renewing the claim (it does so while alive); after that the instance is taken for dead and another runs the firing again. Several instances on one database rely on it." },
  HEARTH_LOG: { default: "info", description: "Log level: info, warn, error or off. One JSON line per call at info." },
  HEARTH_BODY_LIMIT: { default: "1048576", description: "Largest JSON request body accepted, in bytes (413 past it)." },
  HEARTH_BODY_TIMEOUT: { default: "30", description: "Seconds a request body may take to arrive, plus one for each HEARTH_BODY_MIN_RATE bytes it holds; past that the request gets 408 and its connection is closed, so a sender trickling a body cannot hold the instance's resources; 0 turns the bound off." },
  HEARTH_BODY_MIN_RATE: { default: "65536", description: "Bytes per second a request body must arrive at, beyond the first HEARTH_BODY_TIMEOUT seconds, for a large upload over a slow link to be given the time it needs; 0 holds every body to HEARTH_BODY_TIMEOUT alone." },
  HEARTH_BODY_BUDGET: { default: "67108864", description: "Bytes of request bodies received at once across all requests (never below the largest one body may be); past it, further bodies get 429 with Retry-After." },
  HEARTH_URL: { default: "", description: "Instance the CLI calls; empty: this machine at PORT (at HOST when it names one address)." },
  HEARTH_TOKEN: { default: "", description: "Bearer token the CLI sends." },
  HEARTH_SIGNUP: { default: "invite", description: "Who may sign up once the first (admin) account exists: open, invite (with a code an admin makes) or closed." },
  HEARTH_OAUTH_ACCESS_MINUTES: { default: "60", description: "Minutes an access token issued to an OAuth client (an MCP connector that signs in) lasts; the client renews it with its refresh token." },
  HEARTH_OAUTH_LOOPBACK_CLIENTS: { default: "off", description: "on: OAuth clients may be known by a metadata document on this machine (http://127.0.0.1); for tests only. Off, a client ID document must be a public https URL." },
  HEARTH_SESSION_DAYS: { default: "30", description: "Days a browser sign-in lasts before the person signs in again." },
  HEARTH_RATE_READS: { default: "1200", description: "Read calls per minute per caller: an account, whichever of its tokens and sessions it calls with, or a stranger's address; 0 turns the limit off." },
  HEARTH_RATE_WRITES: { default: "300", description: "Write calls per minute per caller; 0 turns the limit off." },
  HEARTH_RATE_DAV_WRITES: { default: "12000", description: "Changes per minute per account from calendar and contacts apps (a CalDAV or CardDAV PUT or DELETE, whatever calls it makes), in place of the write limit: enough for a first sync of 10,000 events or cards in one go; 0 turns the limit off." },
  HEARTH_RATE_PRICED: { default: "60", description: "Calls per minute per caller to methods that cost credits; 0 turns the limit off." },
  HEARTH_RATE_SIGNIN: { default: "10", description: "Sign-in and sign-up attempts per minute per client address; 0 turns the limit off. Failures also slow further tries for that username from that client, and many from unrecognised clients slow them all, though not a browser that signed in to the account before." },
  HEARTH_CONTACT: { default: "", description: "An e-mail or URL for provider operators, sent in the User-Agent of outside requests (OpenStreetMap services ask for one)." },
  UPSTREAM_TIMEOUT_MS: { default: "", description: "Timeout for outside providers in milliseconds; empty keeps each provider's own (10 s mostly). <PROVIDER>_TIMEOUT_MS overrides one." },
  UPSTREAM_RETRY_MS: { default: "250", description: "Pause before the one retry after a transient provider failure, in milliseconds." },
  HEARTH_COLLECTORS: { default: "on", description: "off stops the scheduled collectors (the news, video and social polls), or name the ones to run (\"news,video\"); what they hold stays readable, and those services fetch on demand while they hold nothing (after a failed attempt, not again for 1, 2, 4… minutes). Their answers say whether the collection is stale, when it last worked and why it fails." },
  HEARTH_AUDIT_DAYS: { default: "90", description: "Days the activity log (/activity) keeps each call's entry; older ones are removed once a day. 0 keeps them forever." },
  HEARTH_METERING: { default: "on", description: "off makes every method free (a private instance); on charges credits or x402 payments per DESIGN.md's price table." },
  HEARTH_METER_ACCOUNTS: {
    default: "off",
    description:
      "Whose priced calls cost credits: off (the accounts here are the owner's own: every method is free for them; callers without an account still pay per call), on (every account but the admins), all (admins too). An admin may choose for one account with `hearth credits meter`.",
  },
  HEARTH_PRICES: { default: "", description: "JSON file of per-method price overrides in credits ({\"web/search\": 3}); config/prices.json is read when empty." },
  X402_PAY_TO: { default: "", description: "Address that receives x402 payments from callers without an account; unset: a priced call without an account is refused with 402 naming its price and asking for an account with credits." },
  X402_FACILITATOR_URL: { default: "https://x402.org/facilitator", description: "x402 facilitator that verifies and settles payments (/verify, /settle)." },
  X402_NETWORK: { default: "eip155:8453", description: "CAIP-2 chain payments are taken on (Base mainnet)." },
  X402_ASSET: { default: "", description: "ERC-20 (EIP-3009) token payments are taken in; empty: USDC on X402_NETWORK (Base, Base Sepolia, Ethereum, Avalanche, Polygon, Arbitrum, Arbitrum Sepolia)." },
  X402_ASSET_NAME: { default: "", description: "EIP-712 domain name of X402_ASSET; empty: USDC's on X402_NETWORK (\"USD Coin\", \"USDC\" on Base Sepolia)." },
  X402_ASSET_VERSION: { default: "2", description: "EIP-712 domain version of X402_ASSET." },
  X402_ASSET_DECIMALS: { default: "6", description: "Decimals of X402_ASSET; a credit is 10^(decimals-2) atomic units." },
  X402_MAX_TIMEOUT_SECONDS: { default: "120", description: "How long a payment authorization may take to settle, stated in the challenge." },
  X402_RPC_URL: {
    default: "",
    description:
      "JSON-RPC endpoint of X402_NETWORK, read for a payer's balance of X402_ASSET: a payment is refused while the payer's payments verified and not yet settled would come to more than it holds. Empty: one such payment per payer at a time.",
  },
  AI_BASE_URL: { default: "", description: "OpenAI-compatible API the models are reached at, with its /v1 (https://api.openai.com/v1, https://openrouter.ai/api/v1, a llama.cpp or vLLM server). Empty: Ollama at AI_OLLAMA_URL when it answers; otherwise text, image generation and titles by model answer 501." },
  AI_API_KEY: { default: "", description: "Bearer key for AI_BASE_URL; empty sends none (local servers)." },
  AI_MODEL: { default: "", description: "Chat model for text methods, titles and the agent; empty: the one model AI_BASE_URL lists, or Ollama's most recent." },
  AI_MODEL_EXTRACT: { default: "", description: "A stronger chat model for text/extract; empty uses AI_MODEL." },
  AI_OLLAMA_URL: { default: "http://127.0.0.1:11434", description: "Where Ollama is looked for when AI_BASE_URL is empty; empty looks nowhere." },
  AI_TIMEOUT_MS: { default: "120000", description: "Longest wait for a model's answer in milliseconds (between chunks when streaming); local models on small machines are slow." },
  AI_IMAGE_MODEL: { default: "", description: "Image model for images/generate (gpt-image-1, dall-e-3, ...); empty: images/generate answers 501." },
  AI_IMAGE_BASE_URL: { default: "", description: "OpenAI-compatible API for image generation when it differs from AI_BASE_URL; empty uses AI_BASE_URL." },
  AI_IMAGE_API_KEY: { default: "", description: "Bearer key for AI_IMAGE_BASE_URL; empty uses AI_API_KEY." },
  AI_IMAGE_SIZE: { default: "1024x1024", description: "Size asked of the image model, as WIDTHxHEIGHT." },
};
