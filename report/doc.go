// Package report tells people what callrun did for every contact: the
// report files a run writes into its state directory however it ends, and
// `callrun report` rebuilds after a kill.
//
// [CSVWriter] writes report.csv, one [Row] per input row, in sheet order;
// [XLSXWriter] the same rows as report.xlsx for spreadsheet users; and
// [WriteSummary] and [Summary.Text] give the counts per status, agent and
// sheet; [WriteHTML] writes report.html, the page a person reads, from the
// summary, the journal's runs and what a [Page] gathered of the rows. The files are replaced atomically; [RemoveStale] clears what a
// killed write left behind. What the rows say comes from the durable store
// (package store) and the sheets; this package only writes it down.
package report
