// wasm-worker.js — the browser lab's Go side (packlab.wasm: app.Lab compiled
// to WebAssembly) runs in this Web Worker, so that a run, which holds its
// single thread from start to end, never freezes the page.
//
// The page (backend-wasm.js) talks to it with postMessage:
//   page -> worker  {type: "init", module}, then {type: "call", id, method, args, file?}
//   worker -> page  {type: "module", module}
//                   {type: "ready", resultsDir, persistent, warning}
//                   {type: "reply", id, result | error}
//                   {type: "event", name, data}
//                   {type: "download", name, mime, bytes}
//                   {type: "fatal", message}
// and this script is the host Go binds to (app/browser): it hands calls
// to Go and posts Go's answers and events back as they come.
//
// Go's os package (results store, key files, exports) reaches a file system
// through globalThis.fs, Node's callback API. A browser has none, so this
// script provides a small one in memory (MemFS) before wasm_exec.js looks:
//   /indexeddb/packlab/   kept in IndexedDB (database "packlab", store
//                         "files", one record per file): a file is written
//                         there when it is closed after a change, renamed
//                         into place or removed, and the operation answers Go
//                         only once the IndexedDB transaction has completed.
//                         Hidden files (temporary ones) stay in memory.
//                         Loaded back when the worker starts, so results
//                         survive reloads. (Workers have no localStorage.)
//   /files/               key files the person picked: read-only, read from
//                         the File in slices as Go reads (FileReaderSync),
//                         never loaded whole.
//   /downloads/, /tmp/    scratch, in memory.
"use strict";

const PERSIST_ROOT = "/indexeddb/packlab";
const RESULTS_DIR = PERSIST_ROOT + "/results";
const MEMORY_RESULTS_DIR = "/memory/packlab/results"; // when IndexedDB is refused
const FILES_DIR = "/files";

// ---- errors as Node gives them: an Error with a code Go maps to errno ----

function fsError(code, path) {
  const e = new Error(code + (path ? ": " + path : ""));
  e.code = code;
  return e;
}

// ---- IndexedDB: one record per persisted file ----

const idb = {
  db: null,

  open() {
    return new Promise((resolve) => {
      let req;
      try {
        req = indexedDB.open("packlab", 1);
      } catch (e) {
        resolve(String(e && e.message || e));
        return;
      }
      req.onupgradeneeded = () => req.result.createObjectStore("files");
      req.onsuccess = () => { this.db = req.result; resolve(""); };
      req.onerror = () => resolve(String(req.error && req.error.message || "IndexedDB refused"));
      req.onblocked = () => resolve("IndexedDB is blocked by another tab of an older version");
    });
  },

  // loadAll resolves to [[path, {data, mtimeMs}], ...].
  loadAll() {
    return new Promise((resolve, reject) => {
      const tx = this.db.transaction("files", "readonly");
      const store = tx.objectStore("files");
      const keys = store.getAllKeys();
      const values = store.getAll();
      tx.oncomplete = () => resolve(keys.result.map((k, i) => [k, values.result[i]]));
      tx.onerror = () => reject(tx.error);
    });
  },

  // apply writes puts ([path, record]) and deletes (paths) in one
  // transaction; it resolves when the transaction has completed.
  apply(puts, dels) {
    return new Promise((resolve, reject) => {
      const tx = this.db.transaction("files", "readwrite");
      const store = tx.objectStore("files");
      for (const p of dels) store.delete(p);
      for (const [p, rec] of puts) store.put(rec, p);
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error || new Error("IndexedDB transaction aborted"));
    });
  },
};

// ---- MemFS: the file system Go's os package sees ----

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const O_WRONLY = 1, O_RDWR = 2, O_CREAT = 0o100, O_EXCL = 0o200, O_TRUNC = 0o1000,
  O_APPEND = 0o2000, O_DIRECTORY = 0o200000;

class MemFS {
  constructor() {
    this.ino = 1;
    this.root = this.newNode("dir", 0o755);
    this.fds = new Map();
    this.nextFd = 3;
    this.persistent = false; // IndexedDB is open
    this.constants = { O_RDONLY: 0, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_APPEND, O_DIRECTORY };
    this.out = { 1: "", 2: "" };
  }

  newNode(kind, perm) {
    const now = Date.now();
    return {
      kind, perm: perm & 0o7777, ino: this.ino++, mtimeMs: now, ctimeMs: now,
      children: kind === "dir" ? new Map() : null,
      data: kind === "file" ? new Uint8Array(0) : null, size: 0,
      blob: null, // a picked File: read-only, read in slices
      dirty: false,
    };
  }

  // parts splits a path into its names, resolving "." and ".." from "/".
  parts(path) {
    const out = [];
    for (const p of String(path).split("/")) {
      if (p === "" || p === ".") continue;
      if (p === "..") out.pop(); else out.push(p);
    }
    return out;
  }

  norm(path) { return "/" + this.parts(path).join("/"); }

  lookup(path) {
    let n = this.root;
    for (const name of this.parts(path)) {
      if (n.kind !== "dir") return null;
      n = n.children.get(name);
      if (!n) return null;
    }
    return n;
  }

  // existing is path's node, or throws ENOENT.
  existing(path) {
    const n = this.lookup(path);
    if (!n) throw fsError("ENOENT", path);
    return n;
  }

  // detach takes path's node out of its folder.
  detach(path) {
    const [dir, name] = this.parentOf(path);
    dir.children.delete(name);
  }

  // parentOf returns [parent dir node, base name] or throws ENOENT/ENOTDIR.
  parentOf(path) {
    const ps = this.parts(path);
    if (ps.length === 0) throw fsError("EINVAL", path);
    const name = ps.pop();
    let n = this.root;
    for (const p of ps) {
      if (n.kind !== "dir") throw fsError("ENOTDIR", path);
      n = n.children.get(p);
      if (!n) throw fsError("ENOENT", path);
    }
    if (n.kind !== "dir") throw fsError("ENOTDIR", path);
    return [n, name];
  }

  mkdirp(path) {
    let n = this.root;
    for (const name of this.parts(path)) {
      let c = n.children.get(name);
      if (!c) { c = this.newNode("dir", 0o755); n.children.set(name, c); }
      if (c.kind !== "dir") throw fsError("ENOTDIR", path);
      n = c;
    }
    return n;
  }

  statOf(n) {
    const size = n.kind === "dir" ? 4096 : n.size;
    return {
      dev: 1, ino: n.ino, mode: (n.kind === "dir" ? S_IFDIR : S_IFREG) | n.perm, nlink: 1,
      uid: 0, gid: 0, rdev: 0, size, blksize: 4096, blocks: Math.ceil(size / 512),
      atimeMs: n.mtimeMs, mtimeMs: n.mtimeMs, ctimeMs: n.ctimeMs,
      isDirectory() { return n.kind === "dir"; },
    };
  }

  // ---- persistence ----

  isPersisted(path) {
    const p = this.norm(path);
    if (!this.persistent || !p.startsWith(PERSIST_ROOT + "/")) return false;
    const base = p.slice(p.lastIndexOf("/") + 1);
    return !base.startsWith(".");
  }

  record(n) {
    return { data: n.data.slice(0, n.size), mtimeMs: n.mtimeMs };
  }

  // files lists [path, node] of every file at or under path.
  files(path, n, out) {
    out = out || [];
    if (n.kind === "file") out.push([this.norm(path), n]);
    else for (const [name, c] of n.children) this.files(this.norm(path) + "/" + name, c, out);
    return out;
  }

  // persist applies puts and deletes to IndexedDB and then calls cb.
  persist(puts, dels, cb) {
    if (!puts.length && !dels.length) { cb(null); return; }
    idb.apply(puts, dels).then(() => {
      for (const [, , n] of puts) if (n) n.dirty = false;
      cb(null);
    }, (e) => {
      console.error("packlab: IndexedDB:", e);
      cb(fsError(e && e.name === "QuotaExceededError" ? "ENOSPC" : "EIO", "IndexedDB: " + (e && e.message || e)));
    });
  }

  putsOf(path, n) {
    return this.isPersisted(path) && n.dirty ? [[this.norm(path), this.record(n), n]] : [];
  }

  async load() {
    for (const [path, rec] of await idb.loadAll()) {
      if (!path.startsWith(PERSIST_ROOT + "/")) continue;
      const [dir, name] = this.parentOfCreating(path);
      const n = this.newNode("file", 0o644);
      n.data = rec.data instanceof Uint8Array ? rec.data : new Uint8Array(rec.data || []);
      n.size = n.data.length;
      n.mtimeMs = rec.mtimeMs || Date.now();
      dir.children.set(name, n);
    }
  }

  parentOfCreating(path) {
    const ps = this.parts(path);
    const name = ps.pop();
    return [this.mkdirp("/" + ps.join("/")), name];
  }

  // mount makes a picked File readable at /files/NAME and returns the path.
  mount(file) {
    const dir = this.mkdirp(FILES_DIR);
    const name = String(file.name || "file").replace(/[\/\x00]/g, "_") || "file";
    const n = this.newNode("file", 0o444);
    n.blob = file;
    n.size = file.size;
    n.mtimeMs = file.lastModified || Date.now();
    dir.children.set(name, n);
    return FILES_DIR + "/" + name;
  }

  // ---- Node's fs API, as syscall/fs_js.go calls it ----

  open(path, flags, mode, cb) {
    try {
      const acc = flags & 3;
      const writable = acc === O_WRONLY || acc === O_RDWR;
      let n = this.lookup(path);
      if (!n) {
        if (!(flags & O_CREAT)) throw fsError("ENOENT", path);
        const [dir, name] = this.parentOf(path);
        if (dir === this.lookup(FILES_DIR)) throw fsError("EROFS", path);
        n = this.newNode("file", mode === undefined ? 0o644 : mode);
        n.dirty = true;
        dir.children.set(name, n);
      } else if ((flags & O_CREAT) && (flags & O_EXCL)) {
        throw fsError("EEXIST", path);
      }
      if (n.kind === "dir" && writable) throw fsError("EISDIR", path);
      if ((flags & O_DIRECTORY) && n.kind !== "dir") throw fsError("ENOTDIR", path);
      if (n.blob && writable) throw fsError("EROFS", path);
      if (n.kind === "file" && writable && (flags & O_TRUNC)) {
        n.size = 0; n.dirty = true; n.mtimeMs = Date.now();
      }
      const fd = this.nextFd++;
      this.fds.set(fd, { n, path: this.norm(path), pos: 0, writable, append: !!(flags & O_APPEND) });
      cb(null, fd);
    } catch (e) { cb(e); }
  }

  file(fd) {
    const f = this.fds.get(fd);
    if (!f) throw fsError("EBADF", "fd " + fd);
    return f;
  }

  close(fd, cb) {
    try {
      const f = this.file(fd);
      this.fds.delete(fd);
      if (f.n.kind === "file") { this.persist(this.putsOf(f.path, f.n), [], cb); return; }
      cb(null);
    } catch (e) { cb(e); }
  }

  fsync(fd, cb) {
    try {
      const f = this.file(fd);
      if (f.n.kind === "file") { this.persist(this.putsOf(f.path, f.n), [], cb); return; }
      cb(null);
    } catch (e) { cb(e); }
  }

  read(fd, buf, off, len, pos, cb) {
    try {
      const f = this.file(fd);
      const n = f.n;
      if (n.kind === "dir") throw fsError("EISDIR", f.path);
      const at = pos === null || pos === undefined ? f.pos : pos;
      const k = Math.max(0, Math.min(len, n.size - at));
      if (k > 0) {
        if (n.blob) {
          const ab = new FileReaderSync().readAsArrayBuffer(n.blob.slice(at, at + k));
          buf.set(new Uint8Array(ab), off);
        } else {
          buf.set(n.data.subarray(at, at + k), off);
        }
      }
      if (pos === null || pos === undefined) f.pos = at + k;
      cb(null, k);
    } catch (e) { cb(e && e.code ? e : fsError("EIO", String(e && e.message || e))); }
  }

  writeSync(fd, buf) {
    if (fd === 1 || fd === 2) {
      this.out[fd] += new TextDecoder().decode(buf);
      const nl = this.out[fd].lastIndexOf("\n");
      if (nl !== -1) {
        (fd === 2 ? console.warn : console.log)(this.out[fd].slice(0, nl));
        this.out[fd] = this.out[fd].slice(nl + 1);
      }
      return buf.length;
    }
    throw fsError("EBADF", "fd " + fd);
  }

  write(fd, buf, off, len, pos, cb) {
    try {
      if (fd === 1 || fd === 2) { cb(null, this.writeSync(fd, buf.subarray(off, off + len))); return; }
      const f = this.file(fd);
      const n = f.n;
      if (!f.writable) throw fsError("EBADF", f.path);
      let at = pos === null || pos === undefined ? f.pos : pos;
      if (f.append) at = n.size;
      this.ensure(n, at + len);
      n.data.set(buf.subarray(off, off + len), at);
      n.size = Math.max(n.size, at + len);
      n.dirty = true;
      n.mtimeMs = Date.now();
      if (pos === null || pos === undefined) f.pos = at + len;
      cb(null, len);
    } catch (e) { cb(e); }
  }

  ensure(n, size) {
    if (n.data.length >= size) return;
    const grown = new Uint8Array(Math.max(size, n.data.length * 2, 4096));
    grown.set(n.data.subarray(0, n.size));
    n.data = grown;
  }

  truncateNode(n, length, path) {
    if (n.kind !== "file") throw fsError("EISDIR", path);
    if (n.blob) throw fsError("EROFS", path);
    this.ensure(n, length);
    if (length > n.size) n.data.fill(0, n.size, length);
    n.size = length;
    n.dirty = true;
    n.mtimeMs = Date.now();
  }

  ftruncate(fd, length, cb) {
    try { const f = this.file(fd); this.truncateNode(f.n, length, f.path); cb(null); } catch (e) { cb(e); }
  }

  truncate(path, length, cb) {
    try {
      const n = this.existing(path);
      this.truncateNode(n, length, path);
      this.persist(this.putsOf(path, n), [], cb);
    } catch (e) { cb(e); }
  }

  fstat(fd, cb) {
    try { cb(null, this.statOf(this.file(fd).n)); } catch (e) { cb(e); }
  }

  stat(path, cb) {
    const n = this.lookup(path);
    if (!n) { cb(fsError("ENOENT", path)); return; }
    cb(null, this.statOf(n));
  }

  lstat(path, cb) { this.stat(path, cb); }

  readdir(path, cb) {
    const n = this.lookup(path);
    if (!n) { cb(fsError("ENOENT", path)); return; }
    if (n.kind !== "dir") { cb(fsError("ENOTDIR", path)); return; }
    cb(null, Array.from(n.children.keys()).sort());
  }

  mkdir(path, perm, cb) {
    try {
      if (this.lookup(path)) throw fsError("EEXIST", path);
      const [dir, name] = this.parentOf(path);
      dir.children.set(name, this.newNode("dir", perm));
      cb(null);
    } catch (e) { cb(e); }
  }

  rmdir(path, cb) {
    try {
      const n = this.existing(path);
      if (n.kind !== "dir") throw fsError("ENOTDIR", path);
      if (n.children.size) throw fsError("ENOTEMPTY", path);
      if (n === this.root) throw fsError("EBUSY", path);
      this.detach(path);
      cb(null);
    } catch (e) { cb(e); }
  }

  unlink(path, cb) {
    try {
      if (this.existing(path).kind === "dir") throw fsError("EISDIR", path);
      this.detach(path);
      this.persist([], this.isPersisted(path) ? [this.norm(path)] : [], cb);
    } catch (e) { cb(e); }
  }

  rename(from, to, cb) {
    try {
      const n = this.existing(from);
      const [sdir, sname] = this.parentOf(from);
      const [ddir, dname] = this.parentOf(to);
      const old = ddir.children.get(dname);
      if (old === n) { cb(null); return; }
      if (old && old.kind === "dir" && n.kind !== "dir") throw fsError("EISDIR", to);
      if (old && old.kind !== "dir" && n.kind === "dir") throw fsError("ENOTDIR", to);
      if (old && old.kind === "dir" && old.children.size) throw fsError("ENOTEMPTY", to);
      if (n.kind === "dir" && (this.norm(to) + "/").startsWith(this.norm(from) + "/")) throw fsError("EINVAL", to);
      const dels = [];
      for (const [p] of this.files(from, n)) if (this.isPersisted(p)) dels.push(p);
      if (old) for (const [p] of this.files(to, old)) if (this.isPersisted(p)) dels.push(p);
      sdir.children.delete(sname);
      ddir.children.set(dname, n);
      const puts = [];
      for (const [p, f] of this.files(to, n)) {
        if (this.isPersisted(p) && !f.blob) puts.push([p, this.record(f), f]);
      }
      const putPaths = new Set(puts.map((x) => x[0]));
      this.persist(puts, dels.filter((p) => !putPaths.has(p)), cb);
    } catch (e) { cb(e); }
  }

  chmod(path, mode, cb) {
    const n = this.lookup(path);
    if (!n) { cb(fsError("ENOENT", path)); return; }
    n.perm = mode & 0o7777;
    cb(null);
  }

  fchmod(fd, mode, cb) {
    try { this.file(fd).n.perm = mode & 0o7777; cb(null); } catch (e) { cb(e); }
  }

  chown(path, uid, gid, cb) { cb(this.lookup(path) ? null : fsError("ENOENT", path)); }
  fchown(fd, uid, gid, cb) { try { this.file(fd); cb(null); } catch (e) { cb(e); } }
  lchown(path, uid, gid, cb) { this.chown(path, uid, gid, cb); }

  utimes(path, atime, mtime, cb) {
    const n = this.lookup(path);
    if (!n) { cb(fsError("ENOENT", path)); return; }
    n.mtimeMs = mtime * 1000;
    cb(null);
  }

  link(path, link, cb) { cb(fsError("ENOSYS", "link")); }
  symlink(path, link, cb) { cb(fsError("ENOSYS", "symlink")); }
  readlink(path, cb) { cb(fsError("EINVAL", path)); }
}

const memfs = new MemFS();
globalThis.fs = memfs;
globalThis.process = {
  getuid() { return -1; }, getgid() { return -1; }, geteuid() { return -1; }, getegid() { return -1; },
  getgroups() { throw fsError("ENOSYS", "getgroups"); },
  pid: -1, ppid: -1,
  umask() { return 0o022; },
  cwd() { return "/"; },
  chdir() { throw fsError("ENOSYS", "chdir"); },
};

// ---- the host Go binds to ----

let goCall = null;       // call(id, method, argsJSON), once Go is ready
const queued = [];       // calls that came before
let picked = "";         // the path of the file the person just picked

const host = {
  resultsDir: RESULTS_DIR,
  ready(call) {
    goCall = call;
    postMessage({ type: "ready", resultsDir: host.resultsDir, persistent: memfs.persistent, warning: host.warning || "" });
    for (const m of queued.splice(0)) dispatch(m);
  },
  reply(id, result, error) {
    postMessage(error !== null && error !== undefined
      ? { type: "reply", id, error: JSON.parse(error) }
      : { type: "reply", id, result: JSON.parse(result) });
  },
  event(name, data) {
    postMessage({ type: "event", name, data: JSON.parse(data) });
  },
  download(name, mime, bytes) {
    postMessage({ type: "download", name, mime, bytes }, [bytes.buffer]);
  },
  pickedFile() {
    const p = picked;
    picked = "";
    return p;
  },
  fatal(message) {
    postMessage({ type: "fatal", message: String(message) });
  },
};
globalThis.packlabHost = host;

function dispatch(m) {
  if (m.method === "ChooseSource") picked = m.file ? memfs.mount(m.file) : "";
  goCall(m.id, m.method, JSON.stringify(m.args || []));
}

// The page's first message is {type: "init", module}: the compiled
// WebAssembly.Module of an earlier worker (after a cancel), or null to fetch
// and compile packlab.wasm. A module passed on keeps the code the engine has
// optimised while earlier runs went, so a run after a cancel is not slowed
// by compiling again.
let gotInit;
const init = new Promise((resolve) => { gotInit = resolve; });

onmessage = (ev) => {
  const m = ev.data || {};
  if (m.type === "init") { gotInit(m.module || null); return; }
  if (m.type !== "call") return;
  if (goCall) dispatch(m); else queued.push(m);
};

// ---- start: IndexedDB, then Go ----

importScripts(new URL("../wasm_exec.js", self.location).href);

(async () => {
  try {
    const problem = typeof indexedDB === "undefined" ? "this browser has no IndexedDB here" : await idb.open();
    if (problem === "") {
      memfs.persistent = true;
      await memfs.load();
    } else {
      host.resultsDir = MEMORY_RESULTS_DIR;
      host.warning = "Results are kept in memory only, until the tab closes: " + problem;
    }
    memfs.mkdirp("/tmp");
    const go = new Go();
    go.env = { HOME: "/home", TMPDIR: "/tmp" };
    const url = new URL("../packlab.wasm", self.location).href;
    const module = await init;
    let inst;
    if (module) {
      inst = await WebAssembly.instantiate(module, go.importObject);
    } else {
      let res;
      try {
        res = await WebAssembly.instantiateStreaming(fetch(url), go.importObject);
      } catch (streamErr) {
        // A static host that does not send application/wasm: compile from bytes.
        const resp = await fetch(url);
        if (!resp.ok) throw new Error(url + ": HTTP " + resp.status);
        res = await WebAssembly.instantiate(await resp.arrayBuffer(), go.importObject);
      }
      inst = res.instance;
      postMessage({ type: "module", module: res.module });
    }
    await go.run(inst);
    host.fatal("the lab's Go program stopped");
  } catch (e) {
    host.fatal("the browser lab could not start: " + (e && e.message || e));
  }
})();
