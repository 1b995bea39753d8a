/**
 * An HTTP request's body as MCP reads it, read once: the body the request already has as the tape records it
 * (`request-meaning.ts` encodes it once per request, and the replay tape's records reuse that encoding), and from it
 * the JSON-RPC message or batch, validated once. Only a body that is not plain JSON there (not JSON at all, too deep
 * to walk, numbers a plain parse would round) is parsed again here, to say why it cannot be read or to read it exactly.
 */
import { looksLikeRpc } from '../../providers/mcp.js';
import { rpcMessages, unreadableRpc, type ParsedRpcBody } from '../../providers/mcp-batch.js';
import { JsonTooDeepError, parseJson } from '../../tape/json-depth.js';
import { requestMeaning } from '../../http/request-meaning.js';
import type { ProxyRequest } from '../../http/types.js';

export class McpPost {
  /** The body's JSON value, when it has one. */
  private readonly value: { json: unknown } | { error: unknown };
  private parsed: ParsedRpcBody | undefined;

  constructor(req: ProxyRequest) {
    const body = requestMeaning(req).record.body;
    if (body.kind === 'json') this.value = { json: body.json };
    else {
      const text = body.kind === 'text' ? body.text : req.body.toString('utf8');
      try {
        this.value = { json: parseJson(text) };
      } catch (err) {
        this.value = { error: err };
      }
    }
  }

  /** A JSON-RPC body (one message or a batch): how MCP traffic is recognised, by content. */
  get looksLikeRpc(): boolean {
    return 'json' in this.value && looksLikeRpc(this.value.json);
  }

  /** A body too deep to read: refused, never passed on (it could be a tool call no policy has looked at). */
  get tooDeep(): boolean {
    return 'error' in this.value && this.value.error instanceof JsonTooDeepError;
  }

  /** The body's messages, or why it is not JSON-RPC. */
  rpc(): ParsedRpcBody {
    this.parsed ??= 'json' in this.value ? rpcMessages(this.value.json) : { ok: false, error: unreadableRpc(this.value.error) };
    return this.parsed;
  }
}
