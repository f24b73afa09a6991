// How the stand-in hub refuses, in each generation's words: the webhook era answers FastAPI's
// HTTPException as {detail, retryable}; today's hub answers its i18n errors as {detail, code, hint,
// retryable} (detail and hint in Chinese when Accept-Language names zh) and a plain HTTPException as
// {detail, error, hint: null, retryable}. Routing misses and body validation keep FastAPI's own shapes.
// Strings copied from the hub's i18n catalogue (hub/i18n.py at ed35a77a). Imported by the
// agentline-hub*.ts files; pinned by test/node/agentline-hub.test.ts.
export type Generation = "webhook-era" | "current";
type Entry = [en: string, zh: string, hintEn: string, hintZh: string];

const CATALOG: Record<string, Entry> = {
  invalid_authorization_header: ["Invalid authorization header", "无效的授权头", "Provide a valid 'Bearer <token>' in the Authorization header.", "请在 Authorization 请求头中提供有效的 'Bearer <token>'。"],
  invalid_token: ["Invalid token", "无效的令牌", "The token is malformed or signed with a different secret. Obtain a new token.", "令牌格式错误或使用了不同的密钥签发，请获取新的令牌。"],
  token_expired: ["Token expired", "令牌已过期", "Refresh your token via POST /registry/agents/{{agent_id}}/token/refresh.", "请通过 POST /registry/agents/{{agent_id}}/token/refresh 刷新令牌。"],
  agent_not_found: ["Agent not found", "未找到 Agent", "Check the agent_id. Agent IDs start with 'ag_'.", "请检查 agent_id 是否正确，Agent ID 以 'ag_' 开头。"],
  challenge_not_found: ["Challenge not found", "未找到 Challenge", "Start the registration flow again to obtain a new challenge.", "请重新开始注册流程以获取新的 Challenge。"],
  challenge_already_used: ["Challenge already used", "Challenge 已使用", "Each challenge can only be used once. Register again to get a fresh challenge.", "每个 Challenge 仅可使用一次，请重新注册以获取新的 Challenge。"],
  challenge_expired: ["Challenge expired", "Challenge 已过期", "Challenges expire after a short time. Register again to get a fresh challenge.", "Challenge 已超时，请重新注册以获取新的 Challenge。"],
  key_not_found: ["Key not found", "未找到密钥", "Check the key_id. It should start with 'k_'.", "请检查 key_id 是否正确，key_id 以 'k_' 开头。"],
  signature_verification_failed: ["Signature verification failed", "签名验证失败", "Ensure you are signing with the correct private key matching the registered public key.", "请确认使用了与已注册公钥对应的正确私钥进行签名。"],
  key_not_active: ["Key is not active", "密钥未激活", "This key must be verified and active before it can be used. Complete the challenge-response flow.", "该密钥需要完成验证才能使用，请完成 Challenge-Response 流程。"],
  nonce_already_used: ["Nonce already used", "Nonce 已使用", "Generate a new random nonce for each token refresh request.", "请为每次 token 刷新请求生成一个新的随机 nonce。"],
  agent_id_mismatch: ["Agent ID mismatch", "Agent ID 不匹配", "The agent_id in the URL must match the agent_id in the JWT token.", "URL 中的 agent_id 必须与 JWT 令牌中的 agent_id 一致。"],
  no_endpoint_registered: ["No endpoint registered", "未注册 Endpoint", "Register an endpoint URL via POST /registry/agents/{{agent_id}}/endpoints.", "请通过 POST /registry/agents/{{agent_id}}/endpoints 注册 Endpoint URL。"],
  url_must_use_http_or_https: ["URL must use http or https scheme", "URL 必须使用 http 或 https 协议", "Provide a URL starting with http:// or https://.", "请提供以 http:// 或 https:// 开头的 URL。"],
  url_must_have_hostname: ["URL must have a hostname", "URL 必须包含主机名", "Include a valid hostname in the URL (e.g. https://example.com/webhook).", "请在 URL 中包含有效的主机名（如 https://example.com/webhook）。"],
  private_hostnames_not_allowed: ["Private/internal hostnames are not allowed", "不允许使用私有/内部主机名", "Use a publicly reachable hostname. localhost, .local, and .internal are not allowed.", "请使用可公开访问的主机名，不允许 localhost、.local 和 .internal。"],
  private_ips_not_allowed: ["Private/internal IP addresses are not allowed", "不允许使用私有/内部 IP 地址", "Use a public IP address. Private ranges (10.x, 172.16-31.x, 192.168.x) are not allowed.", "请使用公网 IP 地址，不允许私有地址段（10.x、172.16-31.x、192.168.x）。"],
  pubkey_must_start_with_ed25519: ["pubkey must start with 'ed25519:'", "公钥必须以 'ed25519:' 开头", "Format the public key as 'ed25519:<base64-encoded-key>'.", "请将公钥格式化为 'ed25519:<base64编码的密钥>'。"],
  pubkey_base64_invalid: ["pubkey base64 is invalid", "公钥 base64 格式无效", "Re-encode the public key using standard base64.", "请使用标准 base64 重新编码公钥。"],
  pubkey_must_be_32_bytes: ["Ed25519 public key must be 32 bytes", "Ed25519 公钥必须为 32 字节", "Ensure you are using an Ed25519 public key (exactly 32 bytes after decoding).", "请确认使用的是 Ed25519 公钥（解码后恰好 32 字节）。"],
  sender_does_not_match_token: ["Sender does not match token", "发送者与令牌不匹配", "The 'from' field in the envelope must match the agent_id in your JWT token.", "信封中的 'from' 字段必须与 JWT 令牌中的 agent_id 一致。"],
  send_invalid_type: ["Only type 'message', 'contact_request', 'result', or 'error' accepted on /hub/send", "/hub/send 仅接受类型为 'message'、'contact_request'、'result' 或 'error' 的消息", "Use /hub/send for 'message', 'contact_request', 'result', or 'error' types. Use /hub/receipt for ack/result/error.", "请通过 /hub/send 发送 'message'、'contact_request'、'result' 或 'error' 类型，使用 /hub/receipt 发送 ack/result/error。"],
  rate_limit_exceeded: ["Rate limit exceeded", "超过速率限制", "Wait a moment and retry. The limit resets every minute.", "请稍后重试，速率限制每分钟重置。"],
  conversation_rate_limit_exceeded: ["Conversation rate limit exceeded ({limit} msg/min per conversation)", "会话速率限制已超过（每分钟 {limit} 条消息）", "Slow down messages to this recipient. The per-conversation limit resets every minute.", "请降低向该对话发送消息的频率，每分钟限制会重置。"],
  timestamp_out_of_range: ["Timestamp out of range", "时间戳超出范围", "Sync your system clock. The message timestamp must be within ±5 minutes of the server time.", "请同步系统时钟，消息时间戳必须在服务器时间 ±5 分钟以内。"],
  payload_hash_mismatch: ["Payload hash mismatch", "Payload 哈希不匹配", "Recompute the payload_hash using JCS canonicalization + SHA-256.", "请使用 JCS 规范化 + SHA-256 重新计算 payload_hash。"],
  signing_key_not_found_or_inactive: ["Signing key not found or not active", "未找到签名密钥或密钥未激活", "Check the key_id in the envelope. The key must be verified and active.", "请检查信封中的 key_id，密钥必须已验证且处于活跃状态。"],
  key_does_not_belong_to_sender: ["Key does not belong to sender", "密钥不属于发送者", "Use a signing key that belongs to the 'from' agent in the envelope.", "请使用属于信封中 'from' Agent 的签名密钥。"],
  unknown_agent: ["UNKNOWN_AGENT", "未知 Agent", "The recipient agent_id does not exist. Verify the ID or register the agent first.", "收件人 agent_id 不存在，请确认 ID 或先注册该 Agent。"],
  not_in_contacts: ["NOT_IN_CONTACTS", "不在联系人列表中", "The recipient's policy requires you to be in their contacts. Send a contact request first.", "对方设置了仅联系人策略，请先发送联系人请求。"],
  room_not_found: ["Room not found", "未找到房间", "Check the room_id. Room IDs start with 'rm_'.", "请检查 room_id 是否正确，房间 ID 以 'rm_' 开头。"],
  not_a_member: ["Not a member of this room", "您不是此房间的成员", "Join the room first, or ask an admin to add you.", "请先加入房间，或联系管理员将您添加。"],
  only_owner_admin_can_post: ["Only owner/admin can post to this room", "只有所有者/管理员可以在此房间发送消息", "This room has default_send disabled. Ask an admin to grant you send permission.", "该房间已禁用 default_send，请联系管理员授予您发送权限。"],
  duplicate_content: ["Duplicate content: consecutive identical messages are not allowed", "重复内容：不允许连续发送相同的消息", "Modify your message before resending — consecutive identical messages are blocked.", "请修改消息内容后再发送——不允许连续发送完全相同的消息。"],
  receipt_invalid_type: ["Only ack/result/error accepted on /hub/receipt", "/hub/receipt 仅接受 ack/result/error 类型", "Only ack, result, and error types are accepted on /hub/receipt.", "/hub/receipt 仅接受 ack、result 和 error 类型。"],
  receipt_must_have_reply_to: ["Receipt must have reply_to", "回执必须包含 reply_to", "Set the reply_to field to the msg_id of the message you are acknowledging.", "请在 reply_to 字段中设置您要确认的消息的 msg_id。"],
  original_message_not_found: ["Original message not found", "未找到原始消息", "The message referenced by reply_to does not exist. Check the msg_id.", "reply_to 引用的消息不存在，请检查 msg_id。"],
  message_not_found: ["Message not found", "未找到消息", "Check the msg_id. Message IDs start with 'h_'.", "请检查 msg_id 是否正确，消息 ID 以 'h_' 开头。"],
  not_the_sender: ["Not the sender of this message", "您不是此消息的发送者", "You can only check the delivery status of messages you sent.", "您只能查看自己发送的消息的投递状态。"],
  invalid_cursor: ["Invalid cursor: message not found", "无效的游标：未找到消息", "The cursor references a message that no longer exists. Start pagination from the beginning.", "游标引用的消息已不存在，请从头开始分页。"],
  cannot_send_contact_request_to_self: ["Cannot send contact request to yourself", "不能向自己发送联系人请求", "You cannot add yourself as a contact.", "不能将自己添加为联系人。"],
  already_in_contacts: ["Already in contacts", "已在联系人列表中", "This agent is already in your contacts. No action needed.", "该 Agent 已在您的联系人列表中，无需操作。"],
  contact_request_already_pending: ["Contact request already pending", "联系人请求已在等待中", "A contact request is already waiting for the recipient's response.", "已有一个联系人请求等待对方回应。"],
  contact_request_already_accepted: ["Contact request already accepted", "联系人请求已被接受", "The contact request was already accepted. You are already contacts.", "该联系人请求已被接受，你们已经是联系人。"],
  contact_request_not_found: ["Contact request not found", "未找到联系人请求", "Check the request_id. The contact request may have been deleted.", "请检查 request_id，该联系人请求可能已被删除。"],
  admission_denied_contacts_only: ["Admission denied: agents {denied} have contacts_only policy and you are not in their contacts", "准入被拒绝：Agent {denied} 设置了仅联系人策略，而您不在其联系人列表中", "Some agents have contacts_only policy. Add them as contacts first before inviting.", "部分 Agent 设置了仅联系人策略，请先添加为联系人再邀请。"],
  member_ids_not_found: ["One or more member_ids not found", "一个或多个 member_id 未找到", "Verify all member agent_ids exist and start with 'ag_'.", "请确认所有成员的 agent_id 存在且以 'ag_' 开头。"],
};

/** A refusal: `code` names a catalogue entry (or, for a plain HTTPException, is the detail itself). */
export class HubError extends Error {
  readonly status: number;
  readonly code: string;
  readonly args: Record<string, string | number>;
  readonly headers: Record<string, string>;
  /** i18n: today's {detail, code, hint}; plain: an HTTPException(detail); raw: a body FastAPI writes itself. */
  readonly kind: "i18n" | "plain" | "raw";
  readonly body: unknown;
  constructor(status: number, code: string, options: { args?: Record<string, string | number>; headers?: Record<string, string>; kind?: "i18n" | "plain" | "raw"; body?: unknown } = {}) {
    super(code);
    this.status = status;
    this.code = code;
    this.args = options.args ?? {};
    this.headers = options.headers ?? {};
    this.kind = options.kind ?? (code in CATALOG ? "i18n" : "plain");
    this.body = options.body;
  }
}

export const NOT_FOUND = () => new HubError(404, "not_found", { kind: "raw", body: { detail: "Not Found" } });
export const METHOD_NOT_ALLOWED = () => new HubError(405, "method_not_allowed", { kind: "raw", body: { detail: "Method Not Allowed" } });
/** FastAPI's answer to a request that fails its model (422 with the list of field errors). */
export const invalidBody = (detail: unknown[]) => new HubError(422, "validation", { kind: "raw", body: { detail } });
export const missingHeader = (name: string) => invalidBody([{ type: "missing", loc: ["header", name], msg: "Field required", input: null }]);

const format = (text: string, args: Record<string, string | number>) => (Object.keys(args).length === 0 ? text : text.replace(/\{(\w+)\}/g, (all, name: string) => (name in args ? String(args[name]) : all)));

/** The status, body and headers the generation answers for `err`. */
export function renderError(err: HubError, generation: Generation, acceptLanguage: string | undefined): { status: number; body: unknown; headers: Record<string, string> } {
  const retryable = err.status >= 500;
  if (err.kind === "raw") return { status: err.status, body: err.body, headers: err.headers };
  const entry = CATALOG[err.code];
  const en = entry ? format(entry[0], err.args) : err.code;
  // The webhook era had no Retry-After and one language; its details are today's English ones.
  if (generation === "webhook-era") return { status: err.status, body: { detail: en, retryable }, headers: {} };
  if (err.kind === "plain" || !entry) return { status: err.status, body: { detail: en, error: en, hint: null, retryable }, headers: err.headers };
  const zh = (acceptLanguage ?? "").toLowerCase().includes("zh");
  return { status: err.status, body: { detail: zh ? format(entry[1], err.args) : en, code: err.code, hint: format(zh ? entry[3] : entry[2], err.args), retryable }, headers: err.headers };
}
