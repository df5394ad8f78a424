/** The Select Session rows live in `viewModel/sessionPicker.ts` (the CLI's `sessions` command shows the same rows). */
export * from "../viewModel/sessionPicker";
