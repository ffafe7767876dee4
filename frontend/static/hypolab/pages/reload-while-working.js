// Pages of background work (an export, a dedup run) reload until it is done: the template includes
// this module only while the work runs, with the delay in the json_script "reload-after-ms".
import { readJSON } from "../api.js";

setTimeout(() => location.reload(), readJSON("reload-after-ms"));
