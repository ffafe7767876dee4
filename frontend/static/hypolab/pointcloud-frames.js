/**
 * When the point-cloud viewer (pointcloud-viewer.js) draws, and what it tells the page about it: a
 * frame only when something changed, at most one per animation frame, never in a busy loop;
 * data-frames (frames rendered), data-complete, and the performance marks "hl-viewer:first-frame"
 * and "hl-viewer:full-frame", each once the GPU has finished that frame, not just once the draw
 * call was issued.
 */

/**
 * `draw()` renders a frame and returns whether it is complete (every level, or every octree node
 * the view needs, drawn in a still frame); `drawn()` resolves once the GPU has finished the
 * commands issued so far; `onFirstDrawn()` is called once the first frame is on screen.
 * `followsView`: completeness follows the view (an octree), so an incomplete frame sets
 * data-complete back to "false"; a levelled file, once complete, stays so.
 */
export function frameLoop(element, draw, { drawn, onFirstDrawn, followsView }) {
  let frame = 0;
  let frames = 0;
  let firstMarked = false;
  let fullMarked = false;
  let stopped = false;
  const counted = (complete) => {
    frames += 1;
    element.dataset.frames = String(frames);
    if (!firstMarked) {
      firstMarked = true;
      drawn().then(() => {
        if (!stopped) performance.mark("hl-viewer:first-frame");
        onFirstDrawn();
      });
    }
    if (complete && element.dataset.complete !== "true") {
      const serial = frames;
      drawn().then(() => {
        if (stopped || serial !== frames) return; // a later frame decides
        if (!fullMarked) performance.mark("hl-viewer:full-frame");
        fullMarked = true;
        element.dataset.complete = "true";
      });
    } else if (!complete && followsView()) {
      element.dataset.complete = "false";
    }
  };
  const now = () => {
    cancelAnimationFrame(frame);
    frame = 0;
    counted(draw());
  };
  return {
    /** Draws at the next animation frame. */
    request() {
      if (!frame) frame = requestAnimationFrame(now);
    },
    /** Draws at once. */
    now,
    stop() {
      stopped = true;
      cancelAnimationFrame(frame);
    },
  };
}
