// The last module script of every page (base.html). Deferred module scripts run in document order, so
// when this one runs the page's own have attached their listeners: a page that waits for it
// (data-scripts="loading") lets its buttons take clicks from here on (hypolab.css).
document.body.dataset.scripts = "ready";
