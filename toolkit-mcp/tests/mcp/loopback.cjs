// Preloaded (`node -r`) into npm peers that listen on every interface: makes them listen on
// 127.0.0.1 only.
const http = require("http");
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || typeof args[0] === "string") {
    const callbacks = args.slice(1).filter((arg) => typeof arg === "function");
    return listen.call(this, Number(args[0]), "127.0.0.1", ...callbacks);
  }
  return listen.apply(this, args);
};
