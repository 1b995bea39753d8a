"""The official Python `mcp` client through an OAuth flow, as an agent runs it: `OAuthClientProvider` with in-memory
storage; its "browser" follows the authorization URL and reads the code (and `state`, `iss`) from the redirect.

Usage: python3 python_oauth_client.py URL
Prints one JSON line: {"echo": <text of the echo tool>, "seen": [every code, verifier, token, secret it handled]}.
"""

import asyncio
import json
import sys
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp import ClientSession
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, PKCEParameters, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

SEEN: list[str] = []

# The PKCE verifier never leaves the provider: kept here too, to look for on the tape.
_generate = PKCEParameters.generate


def _generate_seen() -> PKCEParameters:
    pkce = _generate()
    SEEN.append(pkce.code_verifier)
    return pkce


PKCEParameters.generate = staticmethod(_generate_seen)  # type: ignore[method-assign]


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        SEEN.extend(t for t in (tokens.access_token, tokens.refresh_token) if t)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info
        if client_info.client_secret:
            SEEN.append(client_info.client_secret)


async def main(url: str) -> None:
    redirect: dict[str, str | None] = {}

    async def redirect_handler(authorization_url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=False) as browser:
            answer = await browser.get(authorization_url)
        back = parse_qs(urlparse(answer.headers["location"]).query)
        redirect["code"] = back["code"][0]
        redirect["state"] = back.get("state", [None])[0]
        redirect["iss"] = back.get("iss", [None])[0]
        SEEN.append(redirect["code"])

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=redirect["code"] or "", state=redirect["state"], iss=redirect["iss"])

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="tapedeck python agent",
            redirect_uris=["http://localhost:3998/callback"],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="client_secret_post",
        ),
        storage=MemoryStorage(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with create_mcp_http_client(auth=provider) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("echo", {"text": "hello from python"})
    text = result.content[0].text if result.content else ""
    print(json.dumps({"echo": text, "seen": SEEN}))


asyncio.run(main(sys.argv[1]))
