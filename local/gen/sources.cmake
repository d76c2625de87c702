# files of local/gen are listed here by the folder's owner
