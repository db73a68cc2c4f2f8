-- Writing the breaker record back, and its key's expiry (docs/REDIS.md,
-- "Eviction"). After breaker_rules.lua and breaker_read.lua.
-- The key's expiry for record b last seen at ls, judged at now: kind 0 no
-- TTL, 1 sliding, 2 OPEN or held; and the time it ends. CLOSED without a
-- hold (a failure streak or not, like the memory store's idle rule):
-- forgotten after the idle TTL. OPEN: after its open period, any lease and
-- the idle TTL. An endless hold: kept (max_tools bounds how many).
local function expiry(b, ls, now, idle)
  if idle <= 0 then return 0, 0 end
  local held = hold_live(b, now)
  if held and b.fu == 0 then return 0, 0 end
  if idle_forgettable(b, now) then return 1, sat_add(ls, idle) end
  if b.st == 2 or held then return 2, sat_add(math.max(b.ou, ls, b.plu, b.fu), idle) end
  return 0, 0
end
-- SET's expiry option for b at now: none (kind 0: SET drops any TTL) or PX.
local function set_ttl(b, now, idle, caller)
  local kind = expiry(b, b.ls, now, idle)
  if kind == 0 then return nil end
  local ttl = idle
  if kind == 2 then ttl = sat_add(math.max(b.ou, b.ls, b.plu, b.fu) - now, idle) end
  if ttl < 1 then ttl = 1 end
  return real_ttl(ttl, caller)
end
-- Writes b (b.ls = now) with the window as it now is, after load(key, true)
-- or for a new record; returns true when it wrote.
-- Invariant: the key's TTL is the one expiry() gives the stored record at
-- its stored ls. So when nothing but the time changed and the stored ls is
-- younger than the slack (idle / 16, at least 1 s), the fields are not
-- written, unless the kind of expiry changed meanwhile (a timed hold ran
-- out): last_seen and a sliding TTL lag by less than the slack; a changed
-- window slot alone is written in place (win_save). Otherwise the fields
-- are written in place (SETRANGE) with the changed slot, and the expiry
-- set only when its kind or end moved; a new record, a new period (its
-- window cleared) and `always` (force) write the whole record in one SET
-- with its expiry. After an in-place write `raw` holds the fields alone,
-- which is all the reply reads.
local function save(bkey, b, now, idle, caller, always)
  local s = stored
  if always then s = nil end
  if s and idle > 0 and b.st == s[1] and b.cf == s[2] and b.cs == s[3] and
     b.oa == s[4] and b.ou == s[5] and b.gen == s[6] and b.ot == s[7] and
     b.ver == s[9] and b.fo == s[10] and b.fu == s[11] and b.tok == s[12] and
     b.plu == s[13] then
    -- the kind of expiry changes with time only where a timed hold ends
    local seen, slack = s[8], math.floor(idle / 16)
    if slack < 1000 then slack = 1000 end
    if now >= seen and now - seen < slack and
       not ((b.fo == 1 or b.fo == 2) and b.fu > seen and b.fu <= now) then
      saved_ls = seen
      return false
    end
  end
  local head = struct.pack(REC_HEAD, b.st, b.cf, b.cs, b.oa, b.ou, b.gen, b.ot, b.ls, b.ver,
                           b.fo, b.fu)
  if s and idle > 0 and not win_cleared then
    -- the fields in place, then the changed slot; the expiry only when its
    -- kind or end moved
    redis.call('SETRANGE', bkey, 0, head)
    win_save(bkey)
    raw = head
    local old = {st=s[1], cf=s[2], ou=s[5], fo=s[10], fu=s[11], tok=s[12], plu=s[13]}
    local k0, d0 = expiry(old, s[8], s[8], idle)
    local k1, d1 = expiry(b, b.ls, now, idle)
    saved_ls = b.ls
    if k0 ~= k1 or d0 ~= d1 then
      local px = set_ttl(b, now, idle, caller)
      if px then redis.call('PEXPIRE', bkey, px) else redis.call('PERSIST', bkey) end
      expiry_set = true
    end
    return true
  end
  local rec = head .. rwin_now()
  raw, win_slot, win_cleared = rec, nil, nil
  local px = set_ttl(b, now, idle, caller)
  if px then
    redis.call('SET', bkey, rec, 'PX', px)
  else
    redis.call('SET', bkey, rec)
  end
  expiry_set, saved_ls = true, b.ls
  return true
end
-- Folds the outcomes pending in the calls key (load_calls) into the window
-- slot they were counted in, written in place at once, and their transient
-- failures into b's streak: they came after every outcome the record has
-- seen. A success still on its way to its own script ends the streak there.
local function fold_calls(bkey, b)
  local p, f = ck_pend, ck_fail
  if p <= 0 then return end
  ck_pend, ck_fail = 0, 0
  if f > 0 then b.cf = math.min(b.cf + f, U32) end
  local s = pending_calls_slot()
  if not s then return end
  local off = REC_HEAD_LEN + s * REC_SLOT_LEN
  local x, c1, c2, c3 = struct.unpack('>llll', raw, off + 1)
  local bytes = struct.pack('>llll', x, c1 + p, c2 + f, c3)
  raw = string.sub(raw, 1, off) .. bytes .. string.sub(raw, off + REC_SLOT_LEN + 1)
  redis.call('SETRANGE', bkey, off, bytes)
end
-- Writes the calls key for b after save(): the version, `tag` (nil: the
-- one it had) and the record's expiry, while b is CLOSED without a hold;
-- otherwise it is deleted. With none pending and the next count of writes,
-- after fold_calls; with `keep`, keeping what is pending and the count of
-- writes (only the expiry moves). Written only when its value or the
-- record's expiry changed.
local function calls_save(b, now, idle, caller, tag, keep)
  if not ck_key then return end
  if b.st ~= 1 or b.fo ~= 0 then
    if ck_present then redis.call('DEL', ck_key); ck_present = false end
    return
  end
  tag = tag or ck_tag or 0
  local head = (b.ver % CK_VERS) * CK_WRITES
  local writes, pending, failed = ck_writes or 0, 0, 0
  if keep then pending, failed = ck_pend, ck_fail end
  local v = string.format('%d%03d%08d', CK_BASE + (head + writes) * CK_TAGS + tag, failed, pending)
  if ck_text == v and not expiry_set then return end
  if not keep then
    writes = (writes + 1) % CK_WRITES
    v = string.format('%d%03d%08d', CK_BASE + (head + writes) * CK_TAGS + tag, failed, pending)
  end
  local kind, ends = expiry(b, saved_ls or b.ls, now, idle)
  if kind == 0 then
    redis.call('SET', ck_key, v)
  else
    local ttl = ends - now
    if ttl < 1 then ttl = 1 end
    redis.call('SET', ck_key, v, 'PX', real_ttl(ttl, caller))
  end
  ck_present, ck_text, ck_writes, ck_tag = true, v, writes, tag
end
