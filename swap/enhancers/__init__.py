"""Face enhancers (GFPGAN, CodeFormer) on the ffhq_512 crop."""
