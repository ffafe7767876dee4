/**
 * Live dashboards: the server pushes a message over a websocket (Channels) whenever what the page
 * shows changes. `onDown` runs once when the socket closes or cannot open, so a page can poll
 * instead or connect again.
 */
export function subscribe(path, { onMessage, onOpen = () => {}, onDown = () => {} }) {
  let down = false;
  const fail = () => { if (!down) { down = true; onDown(); } };
  try {
    const socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`);
    socket.addEventListener("message", (e) => onMessage(e.data));
    socket.addEventListener("open", onOpen);
    socket.addEventListener("close", fail);
    socket.addEventListener("error", fail);
  } catch (e) {
    fail();
  }
}
