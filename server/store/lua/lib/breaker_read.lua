-- Reading the breaker record (its hash) and the probe key, and the reply
-- every breaker script gives (redis.c parse_breaker reads it).
--
-- The scripts run on every call, so they are written for Redis's Lua: every
-- number turned into a string and every string turned into a number costs,
-- as does each closure and table made per run; the field names are
-- constants.
--
-- load() keeps what it read in `stored` (by field position, then the
-- probe's token and lease) when asked, so that save() writes only what
-- changed; `partial`: a field was missing or not a number. Both are set
-- again on every load: in the functions library they outlive a run.
local stored, partial
local function load(key, track)
  stored, partial = nil, nil
  local v = redis.call('HMGET', key, 'st','cf','cs','oa','ou','gen','ot','ls','ver',
                       'fo','fu')
  local st, cf, cs, oa, ou, gen = v[1], v[2], v[3], v[4], v[5], v[6]
  if not st then return nil end
  local ot, ls, ver, fo, fu = v[7], v[8], v[9], v[10], v[11]
  st = st + 0; cf = cf and cf + 0; cs = cs and cs + 0; oa = oa and oa + 0
  ou = ou and ou + 0; gen = gen and gen + 0; ot = ot and ot + 0; ls = ls and ls + 0
  if track then
    partial = not (cf and cs and oa and ou and gen and ot and ls and ver and fo and fu)
  end
  ver = ver and ver + 0 or 0; fo = fo and fo + 0 or 0; fu = fu and fu + 0 or 0
  if track then stored = {st, cf, cs, oa, ou, gen, ot, ls, ver, fo, fu, '0', 0} end
  return {st=st, cf=cf, cs=cs, oa=oa, ou=ou, gen=gen, ot=ot, ls=ls, ver=ver, fo=fo,
          fu=fu, tok='0', plu=0}
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
-- A script's own values after the breaker's go in `...` (one table, sized
-- once).
local function reply(code, adm, tr, b, now, ...)
  return {code, adm, tr, b.st, b.cf, b.cs, b.oa, b.ou, b.gen, b.ot, b.tok, b.plu,
          b.ls, now, b.ver, b.fo, b.fu, ...}
end
