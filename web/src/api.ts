// The API over the web edge: Connect by default, gRPC-Web with ?transport=grpc-web. The session
// (token, refresh token, player) lives in localStorage so a reload or a second tab is the same
// player; it renews itself with Refresh a minute before the token expires.
import { createClient, ConnectError, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { AuthService, LobbyService, type LoginResponse } from "./gen/tabletop/lobby/v1/lobby_pb";
import { ErrorInfoSchema } from "./gen/third_party/google/rpc/error_details_pb";

export type TransportName = "connect" | "grpc-web";

export function transportName(search: string = location.search): TransportName {
  return new URLSearchParams(search).get("transport") === "grpc-web" ? "grpc-web" : "connect";
}

const baseUrl = location.origin;
export const transport: Transport =
  transportName() === "grpc-web"
    ? createGrpcWebTransport({ baseUrl })
    : createConnectTransport({ baseUrl, useBinaryFormat: true });

export const auth: Client<typeof AuthService> = createClient(AuthService, transport);
export const lobby: Client<typeof LobbyService> = createClient(LobbyService, transport);

export interface Saved {
  token: string;
  refreshToken: string;
  playerId: string;
  name: string;
  expiresAt: number;
  refreshExpiresAt: number;
  guest: boolean;
}

const KEY = "tabletop.session";
let current: Saved | null = load();
let renewTimer: number | undefined;
const listeners: Array<(s: Saved | null) => void> = [];

function load(): Saved | null {
  try {
    const raw = localStorage.getItem(KEY);
    if (!raw) return null;
    const saved = JSON.parse(raw) as Saved;
    const usable = saved.expiresAt > Date.now() || saved.refreshExpiresAt > Date.now();
    return usable ? saved : null;
  } catch {
    return null;
  }
}

export function session(): Saved | null {
  return current;
}

export function onSession(listener: (s: Saved | null) => void): void {
  listeners.push(listener);
}

export function headers(): Record<string, string> {
  return current ? { authorization: `Bearer ${current.token}` } : {};
}

function keep(reply: LoginResponse, guest: boolean, name?: string): Saved {
  current = {
    token: reply.token,
    refreshToken: reply.refreshToken,
    playerId: reply.playerId,
    name: reply.name || name || current?.name || "",
    expiresAt: reply.expiresAt ? Number(timestampMs(reply.expiresAt)) : Date.now() + 3600_000,
    refreshExpiresAt: reply.refreshExpiresAt ? Number(timestampMs(reply.refreshExpiresAt)) : 0,
    guest,
  };
  localStorage.setItem(KEY, JSON.stringify(current));
  schedule();
  for (const l of listeners) l(current);
  return current;
}

function forget(): void {
  current = null;
  localStorage.removeItem(KEY);
  window.clearTimeout(renewTimer);
  for (const l of listeners) l(null);
}

/** Renew a minute before expiry (at least 5 s from now); another tab may have renewed already. */
function schedule(): void {
  window.clearTimeout(renewTimer);
  if (!current || !current.refreshToken) return;
  const wait = Math.max(5_000, current.expiresAt - Date.now() - 60_000);
  renewTimer = window.setTimeout(() => void renew(), Math.min(wait, 2 ** 31 - 1));
}

export async function renew(): Promise<void> {
  const fresh = load();
  if (fresh && current && fresh.expiresAt > current.expiresAt + 1000) {
    current = fresh; // another tab renewed it
    schedule();
    return;
  }
  if (!current?.refreshToken) return;
  try {
    const reply = await auth.refresh({ refreshToken: current.refreshToken });
    keep(reply, current.guest);
  } catch (e) {
    if (current && current.expiresAt < Date.now()) forget();
    else schedule();
  }
}

window.addEventListener("storage", (event) => {
  if (event.key !== KEY) return;
  current = load();
  schedule();
  for (const l of listeners) l(current);
});

export async function ready(): Promise<Saved | null> {
  if (current && current.expiresAt < Date.now() + 30_000) await renew();
  schedule();
  return current;
}

export async function guestLogin(name: string): Promise<Saved> {
  return keep(await auth.login({ name }), true, name);
}

export async function register(username: string, password: string): Promise<Saved> {
  return keep(await auth.register({ username, password }), false, username);
}

export async function accountLogin(username: string, password: string): Promise<Saved> {
  return keep(await auth.accountLogin({ username, password }), false, username);
}

export async function logout(): Promise<void> {
  try {
    if (current) await auth.logout({}, { headers: headers() });
  } catch {
    // the token may have expired already: forgetting it is what matters
  }
  forget();
}

/** A refusal in words: the server's message, with its reason when it has one. */
export function describeError(e: unknown): string {
  if (e instanceof ConnectError) {
    return e.rawMessage || e.message;
  }
  return e instanceof Error ? e.message : String(e);
}

export function errorReason(e: unknown): string {
  if (e instanceof ConnectError) {
    const info = e.findDetails(ErrorInfoSchema)[0];
    return info?.reason ?? "";
  }
  return "";
}
