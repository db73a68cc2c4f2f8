-- Reading the breaker record, the probe key, and the reply every breaker
-- script gives (redis.c parse_breaker reads it).
--
-- The record is one string of REC_LEN bytes (docs/REDIS.md, "Keys"):
-- big-endian signed 64-bit integers (so that C reads a field at its
-- offset: redis_in_place.c), first the 11
-- fields st..fu (REC_HEAD), then the call window's REC_NB slots of
-- (bucket, calls, failures, slow). One GET and one struct.unpack read it:
-- for Redis a fraction of the cost of a hash's fields looked up by name
-- and converted one by one. Every number is below 2^53, exact in Lua.
--
-- The scripts run on every call, so they are written for Redis's Lua: every
-- number turned into a string and every string turned into a number costs,
-- as does each closure and table made per run.
--
-- load() keeps the fields it read in `stored` (by field position, then the
-- probe's token and lease) when asked, so that save() writes only what
-- changed. All of this module's state is set again on every load: in the
-- functions library it outlives a run.
local REC_HEAD = '>lllllllllll'
local REC_HEAD_LEN = 88
local REC_NB = 10
local REC_SLOT_LEN = 32
local REC_LEN = REC_HEAD_LEN + REC_NB * REC_SLOT_LEN
-- `raw`: the record as it now is in Redis (load(), then save()); `stored`:
-- its fields when load() was asked to keep them. The window is read and
-- patched in `raw` (window_record.lua): win_slot and win_bytes are a slot
-- changed since.
local stored, raw, win_slot, win_bytes, win_cleared
-- Tables reused from run to run: in the functions library they outlive a
-- run, and filling them costs Redis less than making new ones.
local KEPT, REC = {}, {}
-- the window of a new record; made on first use (the library's top level
-- runs without the string library)
local empty_win
local function no_window()
  if not empty_win then empty_win = string.rep('\0', REC_NB * REC_SLOT_LEN) end
  return empty_win
end
-- The window's REC_NB * REC_SLOT_LEN bytes as they now are.
local function rwin_now()
  local base
  if raw and not win_cleared then base = string.sub(raw, REC_HEAD_LEN + 1) else base = no_window() end
  if not win_slot then return base end
  local off = win_slot * REC_SLOT_LEN
  return string.sub(base, 1, off) .. win_bytes .. string.sub(base, off + REC_SLOT_LEN + 1)
end
local function win_save(bkey)
  if not win_slot then return end
  redis.call('SETRANGE', bkey, REC_HEAD_LEN + win_slot * REC_SLOT_LEN, win_bytes)
  win_slot = nil
end
-- A value of another type or length is not a record this code wrote (a
-- hash or a shorter record of an older layout): read as absent, so that
-- the script starts the breaker afresh and its SET replaces the value. `stray`
-- tells a script that does not create one that there is such a string to
-- delete.
local stray
-- Set by save() when the expiry the stored record gives changed (not when
-- it only set the same one again), and saved_ls the last_seen the stored
-- record has after save(): the calls key's expiry follows the record's
-- (calls_save).
local expiry_set, saved_ls
local function load(key, track)
  stored, win_slot, win_cleared = nil, nil, nil
  expiry_set, saved_ls = nil, nil
  raw = redis.pcall('GET', key)
  stray = type(raw) == 'string' and #raw ~= REC_LEN
  if type(raw) ~= 'string' or #raw ~= REC_LEN then raw = nil; return nil end
  local st, cf, cs, oa, ou, gen, ot, ls, ver, fo, fu = struct.unpack(REC_HEAD, raw)
  if track then
    local s = KEPT
    s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13] =
      st, cf, cs, oa, ou, gen, ot, ls, ver, fo, fu, '0', 0
    stored = s
  end
  local b = REC
  b.st, b.cf, b.cs, b.oa, b.ou, b.gen, b.ot, b.ls, b.ver, b.fo, b.fu, b.tok, b.plu, b.cleared =
    st, cf, cs, oa, ou, gen, ot, ls, ver, fo, fu, '0', 0, nil
  return b
end
-- A probe key of another generation is a leftover of an older epoch. The
-- probe key is only written while the stored status is OPEN (admit), and
-- every change away from OPEN (close, reset) or to a new generation
-- (open_now, reset) deletes it in the same script: with st ~= 2 no probe
-- key of this generation can exist, so there is nothing to read.
local function load_probe(pkey, b)
  if b.st ~= 2 then return end
  local v = redis.call('GET', pkey)
  if not v then return end
  local tok, gen, untl = string.match(v, '^(%d+) (%d+) (%-?%d+)$')
  if tok and tonumber(gen) == b.gen then
    b.tok = tok; b.plu = tonumber(untl)
    if stored then stored[12] = b.tok; stored[13] = b.plu end
  end
end
-- The calls key, P{tool:<id>}:calls (docs/REDIS.md, "Outcomes without a
-- script"): while the record is CLOSED without a hold, one integer that a
-- success's INCR and a transient failure's INCRBY of CK_FAILURE count into
-- without a script, in decimal digits: H * 10^11 + failures * 10^8 +
-- calls. `calls` (8 digits) counts the outcomes added since a script last
-- wrote the key, `failures` (3 digits) the transient failures among them;
-- they belong to the window bucket whose number mod CK_TAGS is `tag`
-- (redis_in_place.c counts there only then), and the failures extend the
-- record's streak. H = CK_BASE + stamp * CK_TAGS + tag, where the stamp is
-- (version mod CK_VERS) * CK_WRITES + writes and `writes` counts the
-- scripts' writes (mod CK_WRITES), so that an outcome sent on to the record
-- script can tell whether a script has folded it in since. H below
-- CK_BASE (what INCR leaves where there was no key, or a value of an older
-- layout, all below 2^53) or a stamp of another version (outcomes of an
-- earlier period) holds nothing to fold in. The value passes 2^53, so it
-- is read and written as digits, never as one Lua number. CK_TAGS is a
-- multiple of REC_NB, so a tag names its slot.
-- load_calls reads it beside the record b; fold_calls
-- (breaker_write.lua) folds the pending outcomes into the window and the
-- streak, calls_save writes it back. redis_breaker_record.h decodes it in C.
local CK_TAGS, CK_WRITES, CK_VERS, CK_BASE = 350, 1024, 256, 100000
-- the key, whether it exists and its digits; what it holds: the writes,
-- and when it is of b's version the tag, the stamp and the calls and
-- failures pending
local ck_key, ck_present, ck_text, ck_writes, ck_tag, ck_stamp, ck_pend, ck_fail
-- `counts`: b is the stored record (not one this script makes afresh), so
-- the pending outcomes are its own.
local function load_calls(kkey, b, counts)
  ck_key, ck_text, ck_writes, ck_tag, ck_stamp, ck_pend, ck_fail =
    kkey, nil, nil, nil, nil, 0, 0
  local x = redis.call('GET', kkey)
  ck_present = x ~= false
  if not x or #x < 17 or #x > 19 then return end
  ck_text = x
  local n = #x
  local h = tonumber(string.sub(x, 1, n - 11))
  if not h or h < CK_BASE then return end
  h = h - CK_BASE
  local tag = h % CK_TAGS
  local stamp = (h - tag) / CK_TAGS
  local writes = stamp % CK_WRITES
  ck_writes = writes
  if (stamp - writes) / CK_WRITES ~= b.ver % CK_VERS then return end
  ck_tag, ck_stamp = tag, stamp
  if counts and b.st == 1 and b.fo == 0 then
    ck_pend = tonumber(string.sub(x, n - 7))
    ck_fail = tonumber(string.sub(x, n - 10, n - 8))
  end
end
-- The stamp's version (an outcome counted in the key: record.lua).
local function stamp_version(stamp) return (stamp - stamp % CK_WRITES) / CK_WRITES end
-- The window slot the pending calls belong to, or nil when that slot has
-- moved on to another bucket (they are then out of the window already).
local function pending_calls_slot()
  if not ck_tag or not raw then return nil end
  local s = ck_tag % REC_NB
  local x = struct.unpack('>l', raw, REC_HEAD_LEN + s * REC_SLOT_LEN + 1)
  if x % CK_TAGS ~= ck_tag then return nil end
  return s, x
end
-- The reply: {lead, record}. lead: REPLY_LEAD's doubles (code, admission,
-- transition, now, then the record script's calls, failures, slow, failing
-- executors, held by quorum, 0 from the others; the probe's lease end and
-- last_seen), then the probe token's digits ('0' = none). record: the
-- record as it now is, whose first REC_HEAD_LEN bytes are its fields
-- (last_seen there is the stored one).
local REPLY_LEAD = '<ddddddddddd'
local function reply(code, adm, tr, b, now, c1, c2, c3, execs, held)
  return {struct.pack(REPLY_LEAD, code, adm, tr, now, c1 or 0, c2 or 0, c3 or 0, execs or 0,
                      held or 0, b.plu, b.ls) .. b.tok, raw}
end
