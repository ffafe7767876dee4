// The item analysis (review_item_analysis.html): what each item shows, beside its difficulty.
import { readJSON } from "../api.js";
import { mountStimulusCells } from "../stimulus-cells.js";

mountStimulusCells(readJSON("stimuli-data", {}) || {});
