"""The index and paper store on disk: store, writer, string columns, opening, integrity."""
