// Who the dashboard acts as (GET /auth/me) and what its role allows, so that pages show only the
// controls the server would accept. The server checks every route anyway: this is a convenience,
// not the security boundary (a forced request is still a 403).
import { get, ApiError } from './api.js';

const RANK = { reader: 0, user: 1, developer: 2, admin: 3 };

// {principal, tenant, roles, system_admin, auth} once known; null when the server refused the
// caller (no key, or a bad one). `known` is false until asked, and when the server cannot say
// (no /auth/me: an older server) — the pages then offer everything and the server decides.
let me = null;
let known = false;

// Asks the server again (after a sign-in or sign-out). Resolves the caller, or null if refused.
export async function loadCaller() {
  try {
    me = await get('/auth/me');
    known = true;
  } catch (e) {
    me = null;
    known = e instanceof ApiError && (e.status === 401 || e.status === 403);
  }
  return me;
}

export const caller = () => me;

// The highest role of the caller ("system admin" for the bootstrap key), or '' if unknown.
export function roleName() {
  if (!me) return '';
  if (me.system_admin && me.auth === 'on') return 'system admin';
  return (me.roles || []).reduce((best, r) => (RANK[r] !== undefined && (best === '' || RANK[r] > RANK[best]) ? r : best), '');
}

// Whether the caller has `role` or one above it: reader < user < developer < admin.
export function may(role) {
  if (!known) return true;
  if (!me) return false;
  if (me.system_admin) return true;
  return (me.roles || []).some((r) => RANK[r] !== undefined && RANK[r] >= RANK[role]);
}

// A short note shown where a control is left out: "your role (reader) may not send messages".
export const needs = (role, what) => `your role (${roleName() || 'none'}) may not ${what}: that needs ${role}`;
